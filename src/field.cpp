#include "hympi/field.hpp"

namespace hympi {

Field::Field(std::array<int, 3> n) : n_(n) {
  sj_ = n[0] + 2;
  sk_ = sj_ * (n[1] + 2);
  const std::ptrdiff_t planes = n[2] + 2;
  // new double[] leaves the values uninitialised, so the parallel loop below
  // is the first touch: the n2 + 2 planes (halo planes included) are split
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
  data_.reset(new double[static_cast<std::size_t>(sk_ * planes)]);
  double* d = data_.get();
  const std::ptrdiff_t sk = sk_;
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t k = 0; k < planes; ++k)
    for (std::ptrdiff_t x = 0; x < sk; ++x) d[k * sk + x] = 0.0;
}

}  // namespace hympi
