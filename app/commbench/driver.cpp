// The shared parts of every benchmark: lengths, timing, averaging,
// validation, and the document.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <iostream>
#include <limits>
#include <utility>

#include "bench.hpp"
#include "hympi/context_json.hpp"
#include "hympi/error.hpp"
#include "hympi/scheme.hpp"
#include "parse.hpp"
#include "output.hpp"

namespace hympi::bench {

std::vector<long long> beff_lengths(long long lmax) {
  std::vector<long long> l;
  for (long long b = 1; b <= 4096; b *= 2) l.push_back(b);
  for (int j = 1; j <= 8; ++j)
    l.push_back(j == 8 ? lmax
                       : std::llround(4096.0 * std::pow(static_cast<double>(lmax) / 4096.0, j / 8.0)));
  return l;
}

int loop_count(long long bytes) {
  return static_cast<int>(std::clamp<long long>(1000000 / (bytes + 90000), 1, 10));
}

namespace {

// HYMPI_TEST_FAIL_RANK=r makes rank r fail in its first timed exchange, while
// the others wait for it in a collective: the test that a rank failing
// mid-run takes the others down instead of leaving them hanging.
bool fail_here(MPI_Comm comm) {
  static const char* env = std::getenv("HYMPI_TEST_FAIL_RANK");
  if (!env) return false;
  int rank = 0;
  HYMPI_CHECK_MPI(MPI_Comm_rank(comm, &rank));
  return std::to_string(rank) == env;
}

}  // namespace

Timing time_exchange(MPI_Comm comm, int repeat, int loop, Traffic& sent,
                     const std::function<void()>& body) {
  Timing t;
  sent = Traffic{};
  HYMPI_CHECK_MPI(MPI_Barrier(comm));
  if (fail_here(comm)) throw std::runtime_error("failing on purpose (HYMPI_TEST_FAIL_RANK)");
  body();  // warm-up, and the call whose sends are counted
  long long mine[2] = {sent.bytes, sent.messages}, all[2] = {0, 0};
  HYMPI_CHECK_MPI(MPI_Allreduce(mine, all, 2, MPI_LONG_LONG, MPI_SUM, comm));
  t.bytes_moved = all[0];
  t.messages = all[1];
  for (int r = 0; r < repeat; ++r) {
    HYMPI_CHECK_MPI(MPI_Barrier(comm));
    const double t0 = MPI_Wtime();
    for (int i = 0; i < loop; ++i) body();
    double local = (MPI_Wtime() - t0) / loop, worst = 0;
    HYMPI_CHECK_MPI(MPI_Allreduce(&local, &worst, 1, MPI_DOUBLE, MPI_MAX, comm));
    t.times.push_back(worst);
  }
  t.stats = make_stats(t.times);
  t.best = t.stats.min;
  return t;
}

double arithmetic_mean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

double geometric_mean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) {
    if (!(x > 0)) return 0;
    s += std::log(x);
  }
  return std::exp(s / static_cast<double>(v.size()));
}

BeffAverages beff_average(const std::vector<std::vector<double>>& ring_bw,
                          const std::vector<std::vector<double>>& random_bw) {
  BeffAverages a;
  std::vector<double> ring, random;
  for (const auto& p : ring_bw) ring.push_back(arithmetic_mean(p));
  for (const auto& p : random_bw) random.push_back(arithmetic_mean(p));
  a.per_pattern = ring;
  a.per_pattern.insert(a.per_pattern.end(), random.begin(), random.end());
  a.ring = geometric_mean(ring);
  a.random = geometric_mean(random);
  a.b_eff = geometric_mean({a.ring, a.random});
  return a;
}

std::string nodes_word(const NodeMap& nodes) {
  return std::to_string(nodes.node_count) + (nodes.virtual_nodes ? " virtual" : " real") +
         (nodes.node_count == 1 ? " node" : " nodes");
}

// ---- option kinds ------------------------------------------------------------

namespace {

// A comma-separated list, each item parsed by `one` (which explains a bad
// item in `why`); the first bad item ends it.
std::string parse_list(const std::string& name, const std::string& text, std::vector<long long>& out,
                       const std::function<bool(const std::string&, long long&, std::string&)>& one) {
  if (text.empty()) return name + " is empty: expected a comma-separated list";
  out.clear();
  for (const auto& item : cli::split(text, ',')) {
    long long v = 0;
    std::string why;
    if (!one(item, v, why)) return name + " '" + text + "': '" + item + "' " + why;
    out.push_back(v);
  }
  return "";
}

std::string range_text(long long lo, long long hi) {
  return std::to_string(lo) + " .. " + std::to_string(hi);
}

constexpr const char* kByteRange = "accepted 1 byte .. 1GiB (1073741824 bytes)";

}  // namespace

BenchOption bytes_option(std::string name, std::string help, std::string default_text) {
  BenchOption o{name, "BYTES", std::move(help), std::move(default_text), nullptr, true};
  o.parse = [name](const std::string& text, std::vector<long long>& out) -> std::string {
    long long v = 0;
    switch (cli::parse_bytes_checked(text, v)) {
      case cli::ByteParse::Ok: out = {v}; return "";
      case cli::ByteParse::OutOfRange: return name + " " + text + " is out of range: " + kByteRange;
      case cli::ByteParse::Malformed: break;
    }
    return name + " '" + text + "': expected a byte count such as 65536, 64kB or 8MB (" + kByteRange + ")";
  };
  return o;
}

BenchOption bytes_list_option(std::string name, std::string help, std::string default_text) {
  BenchOption o{name, "LIST", std::move(help), std::move(default_text), nullptr, true};
  o.parse = [name](const std::string& text, std::vector<long long>& out) {
    return parse_list(name, text, out, [](const std::string& item, long long& v, std::string& why) {
      switch (cli::parse_bytes_checked(item, v)) {
        case cli::ByteParse::Ok: return true;
        case cli::ByteParse::OutOfRange: why = std::string("is out of range: ") + kByteRange; break;
        case cli::ByteParse::Malformed: why = "is not a byte count such as 2MB"; break;
      }
      return false;
    });
  };
  return o;
}

BenchOption int_option(std::string name, std::string meta, std::string help, std::string default_text,
                       long long lo, long long hi) {
  BenchOption o{name, std::move(meta), std::move(help), std::move(default_text), nullptr};
  o.parse = [name, lo, hi](const std::string& text, std::vector<long long>& out) -> std::string {
    long long v = 0;
    if (!cli::parse_int(text, lo, hi, v)) return cli::int_range_message(name, text, lo, hi, "");
    out = {v};
    return "";
  };
  return o;
}

BenchOption int_list_option(std::string name, std::string help, std::string default_text,
                            long long lo, long long hi) {
  BenchOption o{name, "LIST", std::move(help), std::move(default_text), nullptr};
  o.parse = [name, lo, hi](const std::string& text, std::vector<long long>& out) {
    return parse_list(name, text, out, [lo, hi](const std::string& item, long long& v, std::string& why) {
      if (cli::parse_int(item, lo, hi, v)) return true;
      why = std::string(cli::looks_like_integer(item) ? "is out of range" : "is not an integer") +
            ": accepted " + range_text(lo, hi);
      return false;
    });
  };
  return o;
}

const std::vector<long long>& BenchArgs::list(const std::string& name) const {
  auto it = values.find(name);
  if (it == values.end()) throw std::logic_error("benchmark option " + name + " is not declared");
  return it->second;
}

long long BenchArgs::get(const std::string& name) const {
  const auto& v = list(name);
  if (v.size() != 1) throw std::logic_error("benchmark option " + name + " is not a single value");
  return v[0];
}

std::vector<int> BenchArgs::int_list(const std::string& name) const {
  const auto& v = list(name);
  return std::vector<int>(v.begin(), v.end());  // int_list_option keeps values in int range
}

BenchArgs default_args(const Benchmark& b) {
  BenchArgs a;
  for (const auto& o : b.options) {
    const std::string why = o.parse(o.default_text, a.values[o.name]);
    if (!why.empty()) throw std::logic_error("benchmark " + b.name + ": bad default: " + why);
  }
  return a;
}

std::string options_help(const Benchmark& b) {
  std::string s;
  for (const auto& o : b.options) {
    std::string head = o.name + " " + o.meta;
    head.resize(std::max<std::size_t>(head.size() + 1, 22), ' ');
    s += "  " + head + o.help + " (default " + o.default_text + ")\n";
  }
  return s + b.notes;
}

// ---- validation --------------------------------------------------------------

MethodBandwidths time_methods(BenchContext& ctx, const std::vector<Pair>& pairs, long long bytes,
                              std::vector<char>& sendbuf, std::vector<char>& recvbuf, Traffic& sent,
                              const nlohmann::json& fields, std::vector<nlohmann::json>& records) {
  MethodBandwidths out;
  for (Method m : kMethods) {
    Timing t = time_exchange(ctx.comm, ctx.opt.repeat, loop_count(bytes), sent,
                             [&] { exchange(ctx.comm, m, pairs, bytes, sendbuf, recvbuf, sent); });
    const double bw = static_cast<double>(t.bytes_moved) / t.best / 1e6;
    out.per_method.push_back(bw);
    out.best = std::max(out.best, bw);
    nlohmann::json point = fields;
    point.update({{"kind", "point"},
                  {"method", method_name(m)},
                  {"bytes", bytes},
                  {"bytes_moved", t.bytes_moved},
                  {"messages", t.messages},
                  {"time_s", stats_json(t.stats)},
                  {"bandwidth_MBps", bw}});
    records.push_back(point);
  }
  return out;
}

NodeRing node_ring(const BenchContext& ctx) {
  NodeRing ring;
  ring.nodes = ctx.nodes.node_count;
  ring.node = ctx.nodes.node_id;
  ring.members.resize(ring.nodes);
  for (int r = 0; r < ctx.size; ++r) ring.members[ctx.nodes.node_of_rank[r]].push_back(r);
  ring.c = ctx.size;
  for (const auto& m : ring.members) ring.c = std::min(ring.c, static_cast<int>(m.size()));
  const auto& mine = ring.mine();
  ring.me = static_cast<int>(std::find(mine.begin(), mine.end(), ctx.rank) - mine.begin());
  return ring;
}

Benchmark lmax_benchmark(std::string name, std::string description, BenchRun run) {
  Benchmark b;
  b.name = std::move(name);
  b.description = std::move(description);
  b.options = {bytes_option("--lmax", "largest message, 4KiB .. memory per rank / 128", "8MB")};
  b.check = check_lmax;
  b.min_ranks = 2;
  b.run = std::move(run);
  return b;
}

nlohmann::json lmax_summary(double at_lmax_MBps, int ranks, long long lmax,
                            const std::vector<long long>& lengths) {
  return {{"kind", "summary"},
          {"at_lmax_MBps", at_lmax_MBps},
          {"at_lmax_per_process_MBps", at_lmax_MBps / ranks},
          {"lmax_bytes", lmax},
          {"lengths", lengths}};
}

// The memory a --sizes benchmark allocates, checked before anything is:
// `per_rank(S, c)` bytes on each rank for the largest size S with c ranks per
// node, at most half the node's memory over the node's ranks; its largest
// message `message(S, c)` must fit MPI's int counts.
std::vector<std::string> check_sizes_memory(const BenchArgs& args, const RunShape& s,
                                            const std::function<double(double, int)>& per_rank,
                                            const std::function<double(double, int)>& message) {
  std::vector<std::string> e;
  const auto& sizes = args.list("--sizes");
  if (sizes.empty()) return e;
  const double smax = static_cast<double>(*std::max_element(sizes.begin(), sizes.end()));
  int c = 1;
  if (s.ranks_per_node > 0)
    c = s.ranks_per_node;
  else if (s.real_nodes)
    for (int n : s.real_nodes->ranks_per_node) c = std::max(c, n);
  int per_node = c;  // ranks sharing a real node's memory
  if (s.real_nodes)
    for (int n : s.real_nodes->ranks_per_node) per_node = std::max(per_node, n);
  const double need = per_rank(smax, c) * per_node;
  if (s.node_memory_bytes > 0 && need > s.node_memory_bytes / 2)
    e.push_back("--sizes up to " + std::to_string(static_cast<long long>(smax)) + " bytes needs about " +
                std::to_string(static_cast<long long>(need / 1e6)) + " MB of buffers per node, more than half the node's " +
                std::to_string(static_cast<long long>(s.node_memory_bytes / 1e6)) + " MB");
  else if (message(smax, c) > std::numeric_limits<int>::max())
    e.push_back("--sizes up to " + std::to_string(static_cast<long long>(smax)) + " bytes makes a message of " +
                std::to_string(static_cast<long long>(message(smax, c))) + " bytes with " + std::to_string(c) +
                " ranks per node, more than MPI's int counts hold");
  return e;
}

Benchmark sizes_benchmark(std::string name, std::string description, std::string sizes_help,
                          std::string sizes_default, BenchRun run) {
  Benchmark b;
  b.name = std::move(name);
  b.description = std::move(description);
  b.options = {bytes_list_option("--sizes", std::move(sizes_help), std::move(sizes_default))};
  b.min_ranks = 2;
  b.min_nodes = 2;
  b.run = std::move(run);
  return b;
}

std::vector<std::string> check_lmax(const BenchArgs& args, const RunShape& s) {
  // b_eff's cap: memory per process / 128, the processes of the fullest
  // real node sharing its memory.
  std::vector<std::string> e;
  const long long lmax = args.get("--lmax");
  int per_node = 1;
  if (s.real_nodes)
    for (int n : s.real_nodes->ranks_per_node) per_node = std::max(per_node, n);
  const double cap = s.node_memory_bytes / per_node / 128;
  // cyclic3d may send 6 L to one partner (itself) in one MPI_Alltoallv count.
  const long long int_cap = std::numeric_limits<int>::max() / 6;
  if (lmax < 4096)
    e.push_back("--lmax " + std::to_string(lmax) + " is below 4 kB (4096 bytes)");
  else if (s.node_memory_bytes > 0 && static_cast<double>(lmax) > cap)
    e.push_back("--lmax " + std::to_string(lmax) + " is above the memory cap of " +
                std::to_string(static_cast<long long>(cap)) + " bytes (memory per rank / 128)");
  else if (lmax > int_cap)
    e.push_back("--lmax " + std::to_string(lmax) + " is above " + std::to_string(int_cap) +
                " bytes (6 messages of Lmax must fit MPI's int counts)");
  return e;
}

std::vector<std::string> validate(const BenchOptions& o, const RunShape& s) {
  const Benchmark* b = find_benchmark(o.name);
  if (!b) return {"unknown benchmark '" + o.name + "' (valid: " + benchmark_names() + ")"};
  std::vector<std::string> e = cli::check_threads_and_nodes(s.threads, s.ranks_per_node, s.ranks);
  const bool divides = s.ranks_per_node <= 0 || s.ranks % s.ranks_per_node == 0;
  int nodes = s.real_nodes ? s.real_nodes->node_count : 1;
  if (s.ranks_per_node > 0 && divides) nodes = s.ranks / s.ranks_per_node;
  if (s.ranks < b->min_ranks)
    e.push_back("benchmark '" + b->name + "' needs at least " + std::to_string(b->min_ranks) +
                " ranks, but runs on " + std::to_string(s.ranks));
  else if (nodes < b->min_nodes && divides)
    e.push_back("benchmark '" + b->name + "' needs at least " + std::to_string(b->min_nodes) +
                " nodes, but runs on " + std::to_string(nodes) +
                (s.ranks_per_node > 0 ? " (virtual)" : " (real; --ranks-per-node R makes virtual nodes)"));
  if (s.provided < b->thread_level)
    e.push_back("benchmark '" + b->name + "' needs " + thread_level_name(b->thread_level) +
                ", but the MPI library provided " + thread_level_name(s.provided));
  if (b->check)
    for (auto& m : b->check(o.args, s)) e.push_back(m);
  return e;
}

int run_benchmark(BenchContext& ctx, int requested_level, const std::string& json_path,
                  const std::string& command_line) {
  const Benchmark* b = find_benchmark(ctx.opt.name);
  if (!b) throw UsageError("unknown benchmark '" + ctx.opt.name + "'");
  HYMPI_CHECK_MPI(MPI_Comm_rank(ctx.comm, &ctx.rank));
  HYMPI_CHECK_MPI(MPI_Comm_size(ctx.comm, &ctx.size));
  ctx.nodes = discover_nodes(ctx.comm, ctx.ranks_per_node, ctx.rank_order);
  omp_set_num_threads(ctx.threads);
  // With --json - the document is standard output; the table goes to stderr.
  ctx.out = ctx.rank != 0 ? nullptr : json_path == "-" ? &std::cerr : &std::cout;
  nlohmann::json context;
  if (!json_path.empty())
    context = make_context(ctx.comm, requested_level, ctx.provided, ctx.threads, ctx.nodes,
                                command_line);
  if (ctx.out)
    *ctx.out << "# hympi bench " << b->name << ": " << b->description << "\n# " << ctx.size
             << " ranks on " << nodes_word(ctx.nodes) << ", " << cli::plural(ctx.threads, "thread")
             << " per rank, repeat " << ctx.opt.repeat
             << " (after 1 warm-up); time = max over ranks; units: bytes, MB = 10^6 B, s\n";
  BenchResult result = b->run(ctx);
  std::vector<nlohmann::json>& records = result.records;
  if (ctx.out) {
    *ctx.out << std::flush;
    if (!json_path.empty()) {
      nlohmann::json results = nlohmann::json::array();
      for (auto& r : records) {
        r["benchmark"] = b->name;
        results.push_back(r);
      }
      cli::write_document(json_path, {{"context", context}, {"results", results}});
    }
  }
  return result.ok ? 0 : 1;
}

}  // namespace hympi::bench

namespace hympi::bench {

const char* method_name(Method m) {
  switch (m) {
    case Method::Sendrecv: return "sendrecv";
    case Method::Alltoallv: return "alltoallv";
    case Method::Nonblocking: return "nonblocking";
  }
  return "?";
}

void exchange(MPI_Comm comm, Method m, const std::vector<Pair>& pairs, long long bytes,
              std::vector<char>& sendbuf, std::vector<char>& recvbuf, Traffic& sent) {
  const int n = static_cast<int>(bytes);
  const std::size_t need = pairs.size() * static_cast<std::size_t>(bytes);
  if (sendbuf.size() < need) sendbuf.resize(need);
  if (recvbuf.size() < need) recvbuf.resize(need);
  switch (m) {
    case Method::Sendrecv:
      for (std::size_t i = 0; i < pairs.size(); ++i) {
        HYMPI_CHECK_MPI(MPI_Sendrecv(sendbuf.data() + i * bytes, n, MPI_BYTE, pairs[i].to, 7,
                                     recvbuf.data() + i * bytes, n, MPI_BYTE, pairs[i].from, 7,
                                     comm, MPI_STATUS_IGNORE));
        sent.add(bytes);
      }
      break;
    case Method::Alltoallv: {
      int size = 0;
      HYMPI_CHECK_MPI(MPI_Comm_size(comm, &size));
      // One message per distinct partner: pairs to the same rank are merged.
      std::vector<int> scount(size, 0), rcount(size, 0), sdispl(size, 0), rdispl(size, 0);
      for (const auto& p : pairs) {
        scount[p.to] += n;
        rcount[p.from] += n;
      }
      for (int r = 1; r < size; ++r) {
        sdispl[r] = sdispl[r - 1] + scount[r - 1];
        rdispl[r] = rdispl[r - 1] + rcount[r - 1];
      }
      HYMPI_CHECK_MPI(MPI_Alltoallv(sendbuf.data(), scount.data(), sdispl.data(), MPI_BYTE,
                                    recvbuf.data(), rcount.data(), rdispl.data(), MPI_BYTE, comm));
      for (int r = 0; r < size; ++r)
        if (scount[r]) sent.add(scount[r]);
      break;
    }
    case Method::Nonblocking: {
      std::vector<MPI_Request> req(2 * pairs.size(), MPI_REQUEST_NULL);
      for (std::size_t i = 0; i < pairs.size(); ++i)
        HYMPI_CHECK_MPI(MPI_Irecv(recvbuf.data() + i * bytes, n, MPI_BYTE, pairs[i].from, 7, comm,
                                  &req[i]));
      for (std::size_t i = 0; i < pairs.size(); ++i) {
        HYMPI_CHECK_MPI(MPI_Isend(sendbuf.data() + i * bytes, n, MPI_BYTE, pairs[i].to, 7, comm,
                                  &req[pairs.size() + i]));
        sent.add(bytes);
      }
      HYMPI_CHECK_MPI(MPI_Waitall(static_cast<int>(req.size()), req.data(), MPI_STATUSES_IGNORE));
      break;
    }
  }
}

}  // namespace hympi::bench
