#include "hympi/box.hpp"

#include <algorithm>

namespace hympi {

Range split_range(int n, int parts, int index) {
  const int base = n / parts;
  const int extra = n % parts;
  Range r;
  r.size = base + (index < extra ? 1 : 0);
  r.offset = index * base + std::min(index, extra);
  return r;
}

Box intersect(const Box& a, const Box& b) {
  Box r;
  for (int d = 0; d < 3; ++d) {
    r.lo[d] = std::max(a.lo[d], b.lo[d]);
    r.hi[d] = std::max(r.lo[d], std::min(a.hi[d], b.hi[d]));
  }
  return r;
}

std::vector<Box> subtract(const Box& outer, const Box& inner) {
  std::vector<Box> out;
  if (outer.empty()) return out;
  if (inner.empty()) {
    out.push_back(outer);
    return out;
  }
  // Peel slabs axis by axis; what remains after each axis shrinks to the
  // inner extent along that axis, so the slabs are disjoint.
  Box rest = outer;
  for (int d = 0; d < 3; ++d) {
    Box low = rest, high = rest;
    low.hi[d] = inner.lo[d];
    high.lo[d] = inner.hi[d];
    if (!low.empty()) out.push_back(low);
    if (!high.empty()) out.push_back(high);
    rest.lo[d] = inner.lo[d];
    rest.hi[d] = inner.hi[d];
  }
  return out;
}

Box split_box_part(const Box& box, int parts, int index) {
  const Box none{box.lo, box.lo};
  if (box.empty() || parts < 1 || index < 0 || index >= parts) return none;
  const int nk = box.extent(2);
  Box b = box;
  if (nk >= parts) {
    Range r = split_range(nk, parts, index);
    b.lo[2] = box.lo[2] + r.offset;
    b.hi[2] = b.lo[2] + r.size;
    return b;
  }
  // Fewer planes than parts: plane k gets split_range(parts, nk, k) of the
  // parts, and splits itself along j among them.
  for (int k = 0; k < nk; ++k) {
    Range share = split_range(parts, nk, k);
    if (index >= share.offset + share.size) continue;
    Range r = split_range(box.extent(1), share.size, index - share.offset);
    b.lo[2] = box.lo[2] + k;
    b.hi[2] = b.lo[2] + 1;
    b.lo[1] = box.lo[1] + r.offset;
    b.hi[1] = b.lo[1] + r.size;
    return b;
  }
  return none;
}

std::vector<Box> split_box(const Box& box, int parts) {
  std::vector<Box> out;
  for (int p = 0; p < parts; ++p) out.push_back(split_box_part(box, parts, p));
  return out;
}

}  // namespace hympi
