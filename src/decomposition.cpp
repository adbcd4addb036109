#include "hympi/decomposition.hpp"

#include <algorithm>

namespace hympi {

LocalDomain decompose(const std::array<int, 3>& global, const std::array<bool, 3>& periodic,
                      const ProcessGrid& grid) {
  LocalDomain d;
  d.global = global;
  d.periodic = periodic;
  const auto& dims = grid.choice.dims;
  for (int a = 0; a < 3; ++a) {
    Range r = split_range(global[a], dims[a], grid.coords[a]);
    d.offset[a] = r.offset;
    d.size[a] = r.size;
  }
  for (int dir = 0; dir < kDirections; ++dir) {
    const int a = dir_axis(dir);
    std::array<int, 3> c = grid.coords;
    c[a] += dir_side(dir) == 0 ? -1 : 1;
    if (c[a] < 0 || c[a] >= dims[a]) {
      if (!periodic[a]) {
        d.neighbour[dir] = MPI_PROC_NULL;
        continue;
      }
      c[a] = (c[a] + dims[a]) % dims[a];
    }
    d.neighbour[dir] = grid.rank_of(c);
  }
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const std::array<int, 3> o{dx, dy, dz};
        std::array<int, 3> c = grid.coords;
        bool inside = true;
        for (int a = 0; a < 3; ++a) {
          c[a] += o[a];
          if (c[a] >= 0 && c[a] < dims[a]) continue;
          if (!periodic[a]) inside = false;
          c[a] = (c[a] + dims[a]) % dims[a];
        }
        d.around[offset_index(o)] = inside ? grid.rank_of(c) : MPI_PROC_NULL;
      }
  return d;
}

Box grown_box(const LocalDomain& d, int layers) {
  Box b = d.box();
  for (int dir = 0; dir < kDirections; ++dir) {
    if (!d.has_neighbour(dir)) continue;
    const int a = dir_axis(dir);
    if (dir_side(dir) == 0)
      b.lo[a] = std::min(b.lo[a] - layers, b.hi[a]);
    else
      b.hi[a] = std::max(b.hi[a] + layers, b.lo[a]);
  }
  return b;
}

Box interior_box(const LocalDomain& d, int halo) { return grown_box(d, -halo); }

}  // namespace hympi
