#include "hympi/field.hpp"

namespace hympi {

Field::Field(std::array<int, 3> n) : n_(n) {
  sj_ = n[0] + 2;
  sk_ = sj_ * (n[1] + 2);
  const std::ptrdiff_t planes = n[2] + 2;
  // Not value-initialised by the vector: the parallel loop below is the first
  // touch, so each plane's pages land on the NUMA domain of its thread.
  data_.reserve(static_cast<std::size_t>(sk_ * planes));
  data_.resize(static_cast<std::size_t>(sk_ * planes));
  double* d = data_.data();
  const std::ptrdiff_t sk = sk_;
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t k = 0; k < planes; ++k)
    for (std::ptrdiff_t x = 0; x < sk; ++x) d[k * sk + x] = 0.0;
}

}  // namespace hympi
