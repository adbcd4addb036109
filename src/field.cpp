#include "hympi/field.hpp"

namespace hympi {

Field::Field(std::array<int, 3> n) : n_(n) {
  sj_ = n[0] + 2;
  sk_ = sj_ * (n[1] + 2);
  const std::ptrdiff_t planes = n[2] + 2;
  // new double[] leaves the values uninitialised, so the parallel loop below
  // is the first touch: each plane's pages land on the NUMA domain of the
  // thread that will compute it (static schedule, as the kernels use).
  data_.reset(new double[static_cast<std::size_t>(sk_ * planes)]);
  double* d = data_.get();
  const std::ptrdiff_t sk = sk_;
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t k = 0; k < planes; ++k)
    for (std::ptrdiff_t x = 0; x < sk; ++x) d[k * sk + x] = 0.0;
}

}  // namespace hympi
