#include "hympi/field.hpp"

#include <stdexcept>

namespace hympi {

std::size_t Field::count_for(std::array<int, 3> n, int halo) {
  return static_cast<std::size_t>(n[0] + 2 * halo) * static_cast<std::size_t>(n[1] + 2 * halo) *
         static_cast<std::size_t>(n[2] + 2 * halo);
}

void Field::set_layout(std::array<int, 3> n, int halo) {
  if (halo < 1 || n[0] < 0 || n[1] < 0 || n[2] < 0)
    throw std::invalid_argument("Field: sizes must be >= 0 and the halo >= 1");
  n_ = n;
  h_ = halo;
  sj_ = n[0] + 2 * halo;
  sk_ = sj_ * (n[1] + 2 * halo);
}

Field Field::wrap(double* data, std::array<int, 3> n, int halo) {
  if (!data) throw std::invalid_argument("Field::wrap: null data");
  Field f;
  f.set_layout(n, halo);
  f.data_ = data;
  return f;
}

Field::Field(std::array<int, 3> n, int halo) {
  set_layout(n, halo);
  const std::ptrdiff_t planes = n[2] + 2 * halo;
  // new double[] leaves the values uninitialised, so the parallel loop below
  // is the first touch: the n2 + 2 * halo planes (halo planes included) are split
  // into contiguous blocks, one per thread of the default team (static
  // schedule), and a plane's pages land on the NUMA domain of the thread that
  // touched it. That matches, to within a plane at each block's edge, the
  // n-way split of the interior along k by the non-overlapping schemes
  // (masteronly, masteronly_threaded) and multiple_own's one slab per thread.
  // It does not match the overlapping schemes: funneled computes the interior
  // with threads 1..n-1 (an (n-1)-way split), multiple with threads m..n-1
  // ((n-m)-way), adaptive hands out tiles to whichever thread is free. There
  // a thread's interior block lies partly on pages first touched by its
  // neighbour: on one NUMA domain (or unpinned threads) this costs nothing.
  // The field knows no scheme; matching them would need the split passed in.
  owned_.reset(new double[static_cast<std::size_t>(sk_ * planes)]);
  data_ = owned_.get();
  double* d = data_;
  const std::ptrdiff_t sk = sk_;
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t k = 0; k < planes; ++k)
    for (std::ptrdiff_t x = 0; x < sk; ++x) d[k * sk + x] = 0.0;
}

}  // namespace hympi
