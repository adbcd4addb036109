#include "hympi/timing.hpp"

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

}  // namespace hympi
