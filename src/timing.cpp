#include "hympi/timing.hpp"

#include <algorithm>

namespace hympi {

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::ComputeInterior: return "compute_interior";
    case Phase::ComputeBoundary: return "compute_boundary";
    case Phase::Pack: return "pack";
    case Phase::Unpack: return "unpack";
    case Phase::Comm: return "comm";
    default: return "?";
  }
}

Stats make_stats(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  const std::size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  return s;
}

}  // namespace hympi
