// Boxes of grid points: half-open index ranges [lo, hi) in each direction.
#pragma once

#include <array>
#include <vector>

namespace hympi {

struct Box {
  std::array<int, 3> lo{0, 0, 0};
  std::array<int, 3> hi{0, 0, 0};

  int extent(int d) const { return hi[d] > lo[d] ? hi[d] - lo[d] : 0; }
  bool empty() const { return extent(0) == 0 || extent(1) == 0 || extent(2) == 0; }
  long long points() const {
    return empty() ? 0 : 1LL * extent(0) * extent(1) * extent(2);
  }
  bool operator==(const Box& o) const { return lo == o.lo && hi == o.hi; }
};

// One part of an uneven split of n points into `parts` pieces: the first
// n % parts pieces get one point more, so sizes differ by at most one.
struct Range {
  int offset = 0;
  int size = 0;
};
Range split_range(int n, int parts, int index);

Box intersect(const Box& a, const Box& b);

// The points of `outer` that are not in `inner` (inner must lie inside outer),
// as at most 6 disjoint boxes: the two x slabs over the full y,z extent, then
// the y slabs without the x slabs, then the z slabs without either.
std::vector<Box> subtract(const Box& outer, const Box& inner);

// Split a box into `parts` disjoint boxes (some may be empty) along k, the
// slowest index, so that each part is contiguous in memory; when the box has
// fewer k planes than parts, each plane is split further along j.
std::vector<Box> split_box(const Box& box, int parts);
// Part `index` of split_box(box, parts), without building the others.
Box split_box_part(const Box& box, int parts, int index);

}  // namespace hympi
