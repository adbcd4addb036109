#include "kernel_util.hpp"

#include "hympi/error.hpp"

namespace hympi {

namespace detail {

void fill_initial(Field& f, const LocalDomain& d) {
  const Box b = d.box();
#pragma omp parallel for schedule(static)
  for (int k = b.lo[2]; k < b.hi[2]; ++k)
    for (int j = b.lo[1]; j < b.hi[1]; ++j)
      for (int i = b.lo[0]; i < b.hi[0]; ++i)
        f.at(i, j, k) = initial_value(d.offset[0] + i, d.offset[1] + j, d.offset[2] + k);
}

void fill_value(Field& f, double v) {
  const Box b = f.interior();
#pragma omp parallel for schedule(static)
  for (int k = b.lo[2]; k < b.hi[2]; ++k)
    for (int j = b.lo[1]; j < b.hi[1]; ++j)
      for (int i = b.lo[0]; i < b.hi[0]; ++i) f.at(i, j, k) = v;
}

}  // namespace detail
}  // namespace hympi
