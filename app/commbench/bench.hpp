// hympi bench: one driver, registered benchmarks (one file each, listed in
// registry.cpp). Everything here is the command-line layer: benchmarks print
// their human table on rank 0 and return JSON records; the driver writes the
// document.
#pragma once

#include <mpi.h>

#include <nlohmann/json.hpp>

#include <functional>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "hympi/solver.hpp"
#include "hympi/topology.hpp"
#include "output.hpp"

namespace hympi::bench {

// One option of a benchmark, declared in the benchmark's own file: its name,
// the help line, the default (text, parsed exactly like a user's value) and
// a checked parser. Every value is kept as a list of integers; a single value
// is a list of one.
struct BenchOption {
  std::string name;          // "--lmax"
  std::string meta;          // "BYTES", shown after the name in --help
  std::string help;          // the rest of the help line
  std::string default_text;  // "8MB"
  // Parses `text`; on failure returns the message (naming the option), else "".
  std::function<std::string(const std::string& text, std::vector<long long>& out)> parse;
  bool bytes = false;        // takes byte counts (the help's note on size suffixes)
};

// Checked option kinds (the parsers of options.hpp behind them).
BenchOption bytes_option(std::string name, std::string help, std::string default_text);
BenchOption bytes_list_option(std::string name, std::string help, std::string default_text);
BenchOption int_option(std::string name, std::string meta, std::string help, std::string default_text,
                       long long lo, long long hi);
BenchOption int_list_option(std::string name, std::string help, std::string default_text,
                            long long lo, long long hi);

// The values of a benchmark's options: its defaults, overridden by the
// command line. Reading an option the benchmark did not declare throws.
struct BenchArgs {
  std::map<std::string, std::vector<long long>> values;
  long long get(const std::string& name) const;
  const std::vector<long long>& list(const std::string& name) const;
  std::vector<int> int_list(const std::string& name) const;
};

// The options of `hympi bench NAME` (parsed and validated on rank 0 by
// options.cpp; every rank then parses the same arguments).
struct BenchOptions {
  std::string name;                // which benchmark
  int repeat = 3;                  // timed repetitions (after one warm-up)
  BenchArgs args;                  // the benchmark's own options
};

// What a run is validated against. Pure data, no MPI.
struct RunShape {
  int ranks = 1;
  int ranks_per_node = 0;          // 0: real nodes
  int threads = 1;
  int provided = MPI_THREAD_SINGLE;
  const NodeMap* real_nodes = nullptr;
  double node_memory_bytes = 0;    // 0: unknown
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

// What a benchmark returns: its JSON records (meaningful on rank 0) and
// whether everything it checked was right; a false `ok` fails the run (exit 1).
struct BenchResult {
  std::vector<nlohmann::json> records;
  bool ok = true;
};

struct Benchmark {
  std::string name;
  std::string description;         // one line, for `hympi bench --help`
  std::vector<BenchOption> options;  // its own options, with defaults
  std::string notes;               // extra --help lines (how it uses common options)
  int min_ranks = 1;
  int min_nodes = 1;
  int thread_level = MPI_THREAD_FUNNELED;
  // Whether it runs threads (--threads applies; notes then say how it uses
  // them); the others run one thread per rank and refuse --threads.
  bool uses_threads = false;
  // Problems with its option values on this run shape (beyond ranks, nodes
  // and thread level, which the driver checks). Pure, no MPI; may be empty.
  std::function<std::vector<std::string>(const BenchArgs&, const RunShape&)> check;
  // Collective.
  std::function<BenchResult(BenchContext&)> run;
};

const std::vector<Benchmark>& benchmark_registry();
const Benchmark* find_benchmark(const std::string& name);
// The benchmark's defaults, parsed by its own parsers.
BenchArgs default_args(const Benchmark& b);
// The help lines of its options, generated from the table.
std::string options_help(const Benchmark& b);
std::string benchmark_names();  // "beff, cyclic3d, ..."


// ---- shared pieces ----------------------------------------------------------

// The check of --lmax shared by beff and cyclic3d: at least 4 kB, at most
// b_eff's memory cap and what MPI's int counts hold.
std::vector<std::string> check_lmax(const BenchArgs& args, const RunShape& shape);

// The nodes as a ring (internode, ratio): each node's ranks in rank order,
// c = the fewest ranks on any node, this rank's index `me` on its node, and
// the ranks of this node and of the next and previous nodes.
struct NodeRing {
  int nodes = 1;
  std::vector<std::vector<int>> members;  // [node]: its ranks, in rank order
  int c = 1;
  int me = 0;
  int node = 0;  // this rank's node
  const std::vector<int>& mine() const { return members[node]; }
  const std::vector<int>& next() const { return members[(node + 1) % nodes]; }
  const std::vector<int>& prev() const { return members[(node + nodes - 1) % nodes]; }
};
NodeRing node_ring(const BenchContext& ctx);

using BenchRun = std::function<BenchResult(BenchContext&)>;
// A benchmark over b_eff's message lengths up to --lmax (beff, cyclic3d):
// the --lmax option (default 8MB) with check_lmax, on at least 2 ranks.
Benchmark lmax_benchmark(std::string name, std::string description, BenchRun run);
// The fields their summary records share: the bandwidth at Lmax (MB/s, in
// all and per process), Lmax and the lengths; each adds its own averages.
nlohmann::json lmax_summary(double at_lmax_MBps, int ranks, long long lmax,
                            const std::vector<long long>& lengths);
// A benchmark between nodes over the message sizes of --sizes (internode,
// ratio): at least 2 ranks on at least 2 nodes.
Benchmark sizes_benchmark(std::string name, std::string description, std::string sizes_help,
                          std::string sizes_default, BenchRun run);
std::vector<std::string> check_sizes_memory(const BenchArgs& args, const RunShape& shape,
                                            const std::function<double(double, int)>& per_rank,
                                            const std::function<double(double, int)>& message);

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

// Record helpers (stats_json comes from output.hpp).
using cli::stats_json;
std::string nodes_word(const NodeMap& nodes);  // "2 real nodes" / "2 virtual nodes"

// Runs the named benchmark and writes the document (rank 0). Collective.
// Returns the exit code.
int run_benchmark(BenchContext& ctx, int requested_level, const std::string& json_path,
                  const std::string& command_line);

// Every problem with the options at once: the shared checks of threads and
// ranks per node, ranks, nodes, thread level, then the benchmark's own check.
// Pure, no MPI.
std::vector<std::string> validate(const BenchOptions& o, const RunShape& shape);

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

// One message length of beff and cyclic3d: each method timed (time_exchange,
// loop_count(bytes) calls per repetition), its bandwidth in MB/s (bytes
// moved by all ranks / best time) and its "point" record appended to
// `records`: the pattern's own `fields` plus method, bytes, traffic, times.
// Collective.
struct MethodBandwidths {
  std::vector<double> per_method;  // in kMethods order
  double best = 0;
};
MethodBandwidths time_methods(BenchContext& ctx, const std::vector<Pair>& pairs, long long bytes,
                              std::vector<char>& sendbuf, std::vector<char>& recvbuf, Traffic& sent,
                              const nlohmann::json& fields, std::vector<nlohmann::json>& records);

}  // namespace hympi::bench
