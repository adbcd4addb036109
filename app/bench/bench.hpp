// hympi bench: one driver, registered benchmarks (one file each, listed in
// registry.cpp). Everything here is the command-line layer: benchmarks print
// their human table on rank 0 and return JSON records; the driver writes the
// document.
#pragma once

#include <mpi.h>

#include <nlohmann/json.hpp>

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "hympi/solver.hpp"
#include "hympi/topology.hpp"

namespace hympi::bench {

// The options of `hympi bench NAME` (parsed and validated on rank 0 by
// options.cpp, then broadcast). 0 / empty means "the benchmark's default".
struct BenchOptions {
  std::string name;                // which benchmark
  int repeat = 3;                  // timed repetitions (after one warm-up)
  long long lmax = 8000000;        // beff, cyclic3d: largest message (bytes)
  bool lmax_given = false;
  std::vector<long long> sizes;    // internode, ratio: message sizes (bytes)
  int plane = 24;                  // overlap: NX = NY
  std::vector<int> nk_loc;         // overlap: local depths
  int iters = 10;                  // overlap: spmv iterations per run
  std::vector<int> faces;          // pack: face edge lengths n (n x n faces)
};

// What a benchmark runs with. Collective objects: every rank holds the same.
struct BenchContext {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0, size = 1;
  int threads = 1;                 // OpenMP threads per rank
  int provided = MPI_THREAD_SINGLE;
  int ranks_per_node = 0;          // 0: real nodes
  RankOrder rank_order = RankOrder::Sequential;
  NodeMap nodes;
  BenchOptions opt;
  std::ostream* out = nullptr;     // rank 0: the table; others: nullptr
};

struct Benchmark {
  std::string name;
  std::string description;         // one line, for `hympi bench --help`
  std::string help;                // the benchmark's own options
  int min_ranks = 1;
  int min_nodes = 1;
  int thread_level = MPI_THREAD_FUNNELED;
  // Collective. Returns the JSON records (meaningful on rank 0).
  std::function<std::vector<nlohmann::json>(BenchContext&)> run;
};

const std::vector<Benchmark>& benchmark_registry();
const Benchmark* find_benchmark(const std::string& name);
std::string benchmark_names();  // "beff, cyclic3d, ..."

// One entry per benchmark file (declared here, listed in registry.cpp).
Benchmark beff_benchmark();
Benchmark cyclic3d_benchmark();
Benchmark internode_benchmark();
Benchmark ratio_benchmark();
Benchmark overlap_benchmark();
Benchmark pack_benchmark();

// ---- shared pieces ----------------------------------------------------------

// The 21 message lengths of b_eff: 1 B .. 4 kB by powers of two (13), then 8
// geometric steps from 4 kB to lmax (the last is lmax exactly).
std::vector<long long> beff_lengths(long long lmax);

// Time one exchange: one warm-up call, then `repeat` repetitions of `loop`
// calls each, every repetition started after a barrier; a repetition's time is
// the maximum over ranks of (its elapsed time / loop). Collective.
// Also counts the bytes the body sends: `sent` is reset before the warm-up
// call and read after it, then summed over ranks into bytes_moved.
struct Timing {
  std::vector<double> times;       // per repetition, seconds per call (max over ranks)
  Stats stats;
  double best = 0;                 // min of times
  long long bytes_moved = 0;       // all ranks, one call, counted from the sends
  long long messages = 0;          // all ranks, one call
};
struct Traffic {
  long long bytes = 0, messages = 0;
  void add(long long b) {
    bytes += b;
    ++messages;
  }
};
Timing time_exchange(MPI_Comm comm, int repeat, int loop, Traffic& sent,
                     const std::function<void()>& body);

// How many calls one repetition times, so that short messages are not below
// the timer's resolution: 10 for tiny messages, 1 from ~100 kB on.
int loop_count(long long bytes);

// b_eff's averaging, a pure function (unit-tested):
// per pattern the arithmetic mean over lengths of bandwidth[pattern][length],
// the geometric mean over the patterns of each kind, then the geometric mean
// of the two kinds.
struct BeffAverages {
  std::vector<double> per_pattern;  // arithmetic means over lengths
  double ring = 0, random = 0;      // geometric means over each kind
  double b_eff = 0;                 // geometric mean of ring and random
};
BeffAverages beff_average(const std::vector<std::vector<double>>& ring_bw,
                          const std::vector<std::vector<double>>& random_bw);
double geometric_mean(const std::vector<double>& v);
double arithmetic_mean(const std::vector<double>& v);

// Record helpers.
nlohmann::json stats_json(const Stats& s);
std::string nodes_word(const NodeMap& nodes);  // "2 real nodes" / "2 virtual nodes"

// Runs the named benchmark and writes the document (rank 0). Collective.
// Returns the exit code.
int run_benchmark(BenchContext& ctx, int requested_level, const std::string& json_path,
                  const std::string& command_line);

// Every problem with the options at once, given the ranks, the real nodes and
// the memory of one node. Pure, no MPI.
std::vector<std::string> validate(const BenchOptions& o, int ranks, int ranks_per_node,
                                  int threads, int provided, const NodeMap& real_nodes,
                                  double node_memory_bytes);

}  // namespace hympi::bench

namespace hympi::bench {

// The three b_eff methods, on a list of (send to, receive from) pairs, each
// message `bytes` long. Send and receive buffers hold pairs.size() * bytes.
enum class Method { Sendrecv, Alltoallv, Nonblocking };
const char* method_name(Method m);
constexpr Method kMethods[] = {Method::Sendrecv, Method::Alltoallv, Method::Nonblocking};

struct Pair {
  int to, from;
};
// Collective over the ranks named in the pairs (all ranks for Alltoallv).
// Counts every send into `sent`.
void exchange(MPI_Comm comm, Method m, const std::vector<Pair>& pairs, long long bytes,
              std::vector<char>& sendbuf, std::vector<char>& recvbuf, Traffic& sent);

}  // namespace hympi::bench
