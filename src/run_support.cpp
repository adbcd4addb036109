#include "run_support.hpp"

#include <algorithm>

namespace hympi {
namespace detail {

std::vector<PhaseRow> breakdown_max(const Timers& timers, double local_time, MPI_Comm comm) {
  const int nt = static_cast<int>(timers.size());
  const int width = kPhaseCount + 1;
  std::vector<double> mine(static_cast<std::size_t>(nt) * width);
  for (int t = 0; t < nt; ++t) {
    for (int p = 0; p < kPhaseCount; ++p) mine[t * width + p] = timers[t].seconds[p];
    mine[t * width + kPhaseCount] = std::max(0.0, local_time - timers[t].busy());
  }
  std::vector<double> worst(mine.size());
  HYMPI_CHECK_MPI(MPI_Allreduce(mine.data(), worst.data(), static_cast<int>(mine.size()),
                                MPI_DOUBLE, MPI_MAX, comm));
  std::vector<PhaseRow> rows(nt);
  for (int t = 0; t < nt; ++t)
    for (int p = 0; p <= kPhaseCount; ++p) rows[t][p] = worst[t * width + p];
  return rows;
}

Fractions critical_fractions(const std::vector<PhaseRow>& breakdown, double T) {
  Fractions f;
  if (!(T > 0)) return f;
  double comm_max = 0, interior_max = 0;
  for (const auto& b : breakdown) {
    comm_max = std::max(comm_max, b[static_cast<int>(Phase::Pack)] +
                                      b[static_cast<int>(Phase::Unpack)] +
                                      b[static_cast<int>(Phase::Comm)]);
    interior_max = std::max(interior_max, b[static_cast<int>(Phase::ComputeInterior)]);
  }
  f.comm = std::min(1.0, comm_max / T);
  f.comp_overlap = std::min(1.0 - f.comm, interior_max / T);
  f.comp_non = std::max(0.0, 1.0 - f.comm - f.comp_overlap);
  return f;
}

}  // namespace detail
}  // namespace hympi
