#include "domain_support.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

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

std::vector<RankTrace> gather_trace(const std::vector<TraceLog>& logs, double t0, double elapsed,
                                    MPI_Comm comm) {
  int size = 0, rank = 0;
  HYMPI_CHECK_MPI(MPI_Comm_size(comm, &size));
  HYMPI_CHECK_MPI(MPI_Comm_rank(comm, &rank));
  const int nt = static_cast<int>(logs.size());
  std::vector<double> flat{elapsed};
  for (const auto& l : logs) flat.push_back(static_cast<double>(l.events.size()));
  for (const auto& l : logs)
    for (const TraceEvent& e : l.events) {
      flat.push_back(static_cast<double>(static_cast<int>(e.phase)));
      flat.push_back(e.start - t0);
      flat.push_back(e.end - t0);
    }
  if (flat.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw std::runtime_error("trace too large to gather: use fewer iterations");
  const int mine = static_cast<int>(flat.size());
  std::vector<int> counts(rank == 0 ? size : 0), displs(rank == 0 ? size : 0);
  HYMPI_CHECK_MPI(MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm));
  long long total = 0;
  for (int r = 0; r < static_cast<int>(counts.size()); ++r) {
    displs[r] = static_cast<int>(total);
    total += counts[r];
  }
  if (total > std::numeric_limits<int>::max())
    throw std::runtime_error("trace too large to gather: use fewer iterations or ranks");
  std::vector<double> all(static_cast<std::size_t>(total));
  HYMPI_CHECK_MPI(MPI_Gatherv(flat.data(), mine, MPI_DOUBLE, all.data(), counts.data(),
                              displs.data(), MPI_DOUBLE, 0, comm));
  std::vector<RankTrace> out;
  if (rank != 0) return out;
  out.resize(size);
  for (int r = 0; r < size; ++r) {
    const double* p = all.data() + displs[r];
    RankTrace& rt = out[r];
    rt.elapsed = *p++;
    std::vector<std::size_t> n(nt);
    for (int t = 0; t < nt; ++t) n[t] = static_cast<std::size_t>(*p++);
    rt.threads.resize(nt);
    for (int t = 0; t < nt; ++t) {
      rt.threads[t].reserve(n[t]);
      for (std::size_t i = 0; i < n[t]; ++i, p += 3)
        rt.threads[t].push_back({static_cast<Phase>(static_cast<int>(p[0])), p[1], p[2]});
    }
  }
  return out;
}

}  // namespace detail
}  // namespace hympi
