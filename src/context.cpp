#include "hympi/context.hpp"

#include <omp.h>
#include <sched.h>

#include <algorithm>

#include "hympi/error.hpp"

namespace hympi {

namespace {

std::string cpu_list(const cpu_set_t& set) {
  std::string out;
  int start = -1;
  for (int c = 0; c <= CPU_SETSIZE; ++c) {
    const bool in = c < CPU_SETSIZE && CPU_ISSET(c, &set);
    if (in && start < 0) start = c;
    if (!in && start >= 0) {
      if (!out.empty()) out += ",";
      out += std::to_string(start);
      if (c - 1 > start) out += "-" + std::to_string(c - 1);
      start = -1;
    }
  }
  return out;
}

constexpr int kAffinityChars = 256;

}  // namespace

ThreadPlacement gather_thread_placement(MPI_Comm comm, int threads) {
  int size = 0, rank = 0;
  HYMPI_CHECK_MPI(MPI_Comm_size(comm, &size));
  HYMPI_CHECK_MPI(MPI_Comm_rank(comm, &rank));
  std::vector<int> cpu(threads, -1);
  std::vector<char> aff(static_cast<std::size_t>(threads) * kAffinityChars, '\0');
  std::vector<cpu_set_t> masks(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    cpu[t] = sched_getcpu();
    cpu_set_t& set = masks[t];
    CPU_ZERO(&set);
    std::string s = sched_getaffinity(0, sizeof(set), &set) == 0 ? cpu_list(set) : "?";
    s = s.substr(0, kAffinityChars - 1);
    std::copy(s.begin(), s.end(), aff.begin() + static_cast<std::ptrdiff_t>(t) * kAffinityChars);
  }
  std::vector<int> all_cpu(rank == 0 ? static_cast<std::size_t>(size) * threads : 1);
  std::vector<char> all_aff(rank == 0 ? aff.size() * size : 1);
  HYMPI_CHECK_MPI(MPI_Gather(cpu.data(), threads, MPI_INT, all_cpu.data(), threads, MPI_INT, 0, comm));
  HYMPI_CHECK_MPI(MPI_Gather(aff.data(), static_cast<int>(aff.size()), MPI_CHAR, all_aff.data(),
                             static_cast<int>(aff.size()), MPI_CHAR, 0, comm));
  // Oversubscription: per real host (the ranks that share memory), the
  // threads of all its ranks against the CPUs in the union of their masks.
  MPI_Comm host = MPI_COMM_NULL;
  HYMPI_CHECK_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host));
  // Every thread's mask counts: with OMP_PROC_BIND each thread holds one
  // CPU, and the master's mask alone would undercount the rank's CPUs.
  cpu_set_t mine;
  CPU_ZERO(&mine);
  for (const cpu_set_t& m : masks) CPU_OR(&mine, &mine, &m);
  cpu_set_t shared;
  CPU_ZERO(&shared);
  int host_threads = 0;
  const int mpi_ok =
      MPI_Allreduce(&mine, &shared, static_cast<int>(sizeof(cpu_set_t)), MPI_BYTE, MPI_BOR, host);
  const int mpi_ok2 = MPI_Allreduce(&threads, &host_threads, 1, MPI_INT, MPI_SUM, host);
  MPI_Comm_free(&host);
  HYMPI_CHECK_MPI(mpi_ok);
  HYMPI_CHECK_MPI(mpi_ok2);
  const int host_load[2] = {host_threads, CPU_COUNT(&shared)};
  std::vector<int> all_load(rank == 0 ? 2 * static_cast<std::size_t>(size) : 2);
  HYMPI_CHECK_MPI(MPI_Gather(host_load, 2, MPI_INT, all_load.data(), 2, MPI_INT, 0, comm));
  ThreadPlacement p;
  if (rank != 0) return p;
  for (int r = 0; r < size; ++r) {
    const int t = all_load[2 * r], c = all_load[2 * r + 1];
    if (c > 0 && t > c && (!p.oversubscribed || t - c > p.host_threads - p.host_cpus)) {
      p.oversubscribed = true;
      p.host_threads = t;
      p.host_cpus = c;
    }
  }
  p.cpu.assign(size, std::vector<int>(threads));
  p.affinity.assign(size, std::vector<std::string>(threads));
  for (int r = 0; r < size; ++r)
    for (int t = 0; t < threads; ++t) {
      p.cpu[r][t] = all_cpu[r * threads + t];
      p.affinity[r][t] = std::string(&all_aff[(static_cast<std::size_t>(r) * threads + t) * kAffinityChars]);
    }
  return p;
}

std::string oversubscription_warning(const ThreadPlacement& p) {
  if (!p.oversubscribed) return "";
  return "hympi: warning: oversubscribed: " + std::to_string(p.host_threads) + " threads share " +
         std::to_string(p.host_cpus) + (p.host_cpus == 1 ? " CPU" : " CPUs") +
         " on one host; times measure waiting as much as the scheme (the context block says "
         "\"oversubscribed\": true)";
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string s(text, static_cast<std::size_t>(len));
  auto nl = s.find('\n');
  if (nl != std::string::npos) s = s.substr(0, nl);
  while (!s.empty() && (s.back() == ' ' || s.back() == ',' || s.back() == '\0')) s.pop_back();
  return s;
}

std::string mpi_standard_version() {
  int v = 0, sv = 0;
  MPI_Get_version(&v, &sv);
  return std::to_string(v) + "." + std::to_string(sv);
}

}  // namespace hympi
