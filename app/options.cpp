#include "options.hpp"

#include <mpi.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>

#include "hympi/kernels.hpp"
#include "hympi/scheme.hpp"

namespace hympi::cli {

bool parse_int(const std::string& text, long long lo, long long hi, long long& out) {
  if (text.empty()) return false;
  std::size_t start = (text[0] == '-' || text[0] == '+') ? 1 : 0;
  if (start == text.size()) return false;
  for (std::size_t i = start; i < text.size(); ++i)
    if (text[i] < '0' || text[i] > '9') return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE || *end != '\0' || v < lo || v > hi) return false;
  out = v;
  return true;
}

bool parse_double(const std::string& text, double& out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (errno == ERANGE || *end != '\0' || !std::isfinite(v)) return false;
  out = v;
  return true;
}

bool parse_bytes(const std::string& text, long long& out) {
  static const std::pair<const char*, long long> suffixes[] = {
      {"KiB", 1LL << 10}, {"MiB", 1LL << 20}, {"GiB", 1LL << 30}, {"kB", 1000}, {"MB", 1000000},
      {"GB", 1000000000}, {"k", 1000}, {"M", 1000000}, {"G", 1000000000}};
  std::string digits = text;
  long long unit = 1;
  for (const auto& [suffix, factor] : suffixes) {
    const std::string sfx = suffix;
    if (text.size() > sfx.size() && text.compare(text.size() - sfx.size(), sfx.size(), sfx) == 0) {
      digits = text.substr(0, text.size() - sfx.size());
      unit = factor;
      break;
    }
  }
  long long v = 0;
  if (digits.empty() || digits[0] == '+' || digits[0] == '-') return false;
  if (!parse_int(digits, 1, (1LL << 30) / unit, v)) return false;
  out = v * unit;
  return true;
}

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

// Up to 2^30 points per axis: index arithmetic stays in range.
constexpr long long kMaxAxis = 1LL << 30;

}  // namespace

bool parse_grid(const std::string& text, std::array<int, 3>& out, std::string& why) {
  std::vector<std::string> parts;
  auto caret = text.find('^');
  if (caret != std::string::npos) {
    if (text.substr(caret) != "^3") {
      why = "only N^3 is accepted as a power";
      return false;
    }
    const std::string n = text.substr(0, caret);
    parts = {n, n, n};
  } else {
    parts = split(text, 'x');
  }
  if (parts.size() != 3) {
    why = "expected three dimensions NXxNYxNZ or N^3, got " + std::to_string(parts.size());
    return false;
  }
  for (int d = 0; d < 3; ++d) {
    long long v = 0;
    if (!parse_int(parts[d], 1, kMaxAxis, v)) {
      why = "dimension '" + parts[d] + "' is not an integer between 1 and " + std::to_string(kMaxAxis);
      return false;
    }
    out[d] = static_cast<int>(v);
  }
  return true;
}

int thread_level_from_name(const std::string& name) {
  if (name == "single") return MPI_THREAD_SINGLE;
  if (name == "funneled") return MPI_THREAD_FUNNELED;
  if (name == "serialized") return MPI_THREAD_SERIALIZED;
  if (name == "multiple") return MPI_THREAD_MULTIPLE;
  return -1;
}

int requested_thread_level(const Options& o) {
  if (!o.thread_level.empty()) {
    int l = thread_level_from_name(o.thread_level);
    if (l >= 0) return l;
  }
  if (o.command == Command::Info) return MPI_THREAD_MULTIPLE;  // report the most on offer
  if (o.command == Command::Bench) {
    const bench::Benchmark* b = bench::find_benchmark(o.bench.name);
    return b ? b->thread_level : MPI_THREAD_FUNNELED;
  }
  if (const SchemeEntry* e = find_scheme(o.solve.scheme)) return e->info.thread_level;
  return MPI_THREAD_FUNNELED;
}

std::string main_usage() {
  return "usage: hympi <command> [options]\n"
         "\n"
         "Hybrid MPI + OpenMP schemes for 3-D stencil and sparse kernels.\n"
         "Run under mpirun/mpiexec/srun; every command works on any number of ranks.\n"
         "\n"
         "commands:\n"
         "  solve   run a kernel under a hybrid scheme (hympi solve --help)\n"
         "  info    schemes, kernels, MPI library, thread level, node map, thread CPUs\n"
         "  bench   communication benchmarks: beff, cyclic3d, internode, ratio, overlap, pack\n"
         "\n"
         "hympi <command> --help shows the options of a command.\n";
}

namespace {

std::string names_of_schemes() {
  std::string s;
  for (const auto& e : scheme_registry()) s += (s.empty() ? "" : ", ") + e.info.name;
  return s;
}
std::string names_of_kernels() {
  std::string s;
  for (const auto& k : kernel_registry()) s += (s.empty() ? "" : ", ") + k.name;
  return s;
}

std::string solve_help() {
  return "usage: hympi solve --kernel K --grid NXxNYxNZ [options]\n"
         "\n"
         "Runs kernel K on the reference problem (SYSTEM.md) under a hybrid scheme and\n"
         "reports checksum and l2 of the final field, time and a per-thread breakdown.\n"
         "\n"
         "  --kernel K            " + names_of_kernels() + "\n"
         "  --grid G              global grid NXxNYxNZ, or N^3 for a cube\n"
         "  --iters T             iterations of jacobi/rbgs/spmv (default 10)\n"
         "  --periodic            periodic boundaries (default Dirichlet 0)\n"
         "  --scheme S            " + names_of_schemes() + " (default masteronly)\n"
         "  --threads N           OpenMP threads per rank (default $OMP_NUM_THREADS or 1)\n"
         "  --reserved M          communication threads of 'multiple' (1 <= M < N, default 1)\n"
         "  --format F            stencil | crs: matrix-free or stored matrix (spmv, cg)\n"
         "  --ranks-per-node R    virtual nodes of R ranks (default: real nodes)\n"
         "  --rank-order O        sequential | round-robin: ranks onto virtual nodes\n"
         "  --proc-grid PXxPYxPZ  process grid (default: node-aware choice)\n"
         "  --tol X               cg: relative residual to reach (default 1e-8)\n"
         "  --max-iters N         cg: iteration limit (default 10000)\n"
         "  --repeat R            repetitions; time is min/median/max (default 1)\n"
         "  --thread-level L      ask MPI for single|funneled|serialized|multiple instead\n"
         "                        of the level the scheme needs (refused if too low)\n"
         "  --json PATH           write the JSON result document (rank 0)\n"
         "  --trace PATH          write every thread's timeline of the median repetition\n"
         "                        as Chrome Trace Event JSON (Perfetto, chrome://tracing)\n"
         "  --help                this text\n";
}

std::string info_help() {
  return "usage: hympi info [--json [PATH]] [--threads N] [--ranks-per-node R] [--rank-order O]\n"
         "\n"
         "Lists schemes (with the MPI thread level each needs), kernels, the MPI library and\n"
         "version, the thread level provided, the node map and the CPU each thread runs on.\n"
         "\n"
         "  --json [PATH]         JSON instead of text: to PATH, or to stdout\n"
         "  --threads N           threads per rank to report (default $OMP_NUM_THREADS or 1)\n"
         "  --ranks-per-node R    virtual nodes of R ranks\n"
         "  --rank-order O        sequential | round-robin\n"
         "  --help                this text\n";
}

std::string bench_help(const std::string& name) {
  const std::string common =
      "  --repeat R            timed repetitions after one warm-up (default 3)\n"
      "  --threads N           OpenMP threads per rank (default $OMP_NUM_THREADS or 1)\n"
      "  --ranks-per-node R    virtual nodes of R ranks (default: real nodes)\n"
      "  --rank-order O        sequential | round-robin: ranks onto virtual nodes\n"
      "  --json PATH           write the JSON result document (rank 0)\n"
      "  --help                this text\n"
      "\n"
      "Sizes are bytes, optionally with a suffix: kB, MB, GB (10^3, 10^6, 10^9) or\n"
      "KiB, MiB, GiB. Times are the maximum over ranks, reported as min / median / max.\n";
  if (const bench::Benchmark* b = bench::find_benchmark(name))
    return "usage: hympi bench " + b->name + " [options]\n\n" + b->description + "\n\n" + b->help +
           common;
  std::string s =
      "usage: hympi bench <benchmark> [options]\n"
      "\n"
      "Communication benchmarks (SYSTEM.md, \"Benchmarks\"); hympi bench <benchmark> --help\n"
      "shows a benchmark's options.\n"
      "\n"
      "benchmarks:\n";
  for (const auto& b : bench::benchmark_registry()) {
    std::string pad(b.name.size() < 11 ? 11 - b.name.size() : 1, ' ');
    s += "  " + b.name + pad + b.description + "\n";
  }
  return s + "\ncommon options:\n" + common;
}

int default_threads() {
  const char* env = std::getenv("OMP_NUM_THREADS");
  long long v = 0;
  if (env && parse_int(env, 1, 1024, v)) return static_cast<int>(v);
  return 1;
}

}  // namespace

Options parse(const std::vector<std::string>& args) {
  Options o;
  o.solve.threads = default_threads();
  if (args.empty()) {
    o.errors.push_back("no command given\n" + main_usage());
    return o;
  }
  const std::string& cmd = args[0];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    o.help = true;
    o.help_text = main_usage();
    return o;
  }
  if (cmd == "solve") {
    o.command = Command::Solve;
    o.help_text = solve_help();
  } else if (cmd == "info") {
    o.command = Command::Info;
    o.help_text = info_help();
  } else if (cmd == "bench") {
    o.command = Command::Bench;
    if (args.size() > 1 && args[1].rfind("-", 0) != 0) o.bench.name = args[1];
    o.help_text = bench_help(o.bench.name);
  } else {
    o.errors.push_back("unknown command '" + cmd + "' (valid: solve, info, bench)");
    return o;
  }

  auto& e = o.errors;
  auto& s = o.solve;
  bool have_kernel = false, have_grid = false;
  auto int_opt = [&](const std::string& name, long long lo, long long hi, const std::string& v,
                     int& out) {
    long long x = 0;
    if (!parse_int(v, lo, hi, x))
      e.push_back(name + " '" + v + "': expected an integer between " + std::to_string(lo) +
                  " and " + std::to_string(hi));
    else
      out = static_cast<int>(x);
  };
  // The options of each command; a value-taking option is handled by a
  // function of its value.
  using Handler = std::function<void(const std::string&)>;
  std::map<std::string, Handler> with_value;
  std::map<std::string, std::function<void()>> flags;
  const long long big = 1LL << 30;
  with_value["--threads"] = [&](const std::string& v) { int_opt("--threads", -big, big, v, s.threads); };
  with_value["--ranks-per-node"] = [&](const std::string& v) {
    int_opt("--ranks-per-node", 1, big, v, s.ranks_per_node);
  };
  with_value["--rank-order"] = [&](const std::string& v) {
    if (v == "sequential")
      s.rank_order = RankOrder::Sequential;
    else if (v == "round-robin")
      s.rank_order = RankOrder::RoundRobin;
    else
      e.push_back("--rank-order '" + v + "': expected sequential or round-robin");
  };
  flags["--help"] = [&] { o.help = true; };
  if (o.command == Command::Solve) {
    with_value["--kernel"] = [&](const std::string& v) {
      have_kernel = true;
      const KernelInfo* k = find_kernel(v);
      if (!k)
        e.push_back("unknown kernel '" + v + "' (valid: " + names_of_kernels() + ")");
      else
        s.kernel = k->kind;
    };
    with_value["--grid"] = [&](const std::string& v) {
      have_grid = true;
      std::string why;
      std::array<int, 3> g{};
      if (!parse_grid(v, g, why))
        e.push_back("--grid '" + v + "': " + why);
      else
        s.grid = g;
    };
    with_value["--iters"] = [&](const std::string& v) { int_opt("--iters", -big, big, v, s.iters); };
    with_value["--scheme"] = [&](const std::string& v) { s.scheme = v; };
    with_value["--reserved"] = [&](const std::string& v) {
      int_opt("--reserved", -big, big, v, s.reserved);
      if (s.reserved == 0) e.push_back("--reserved must be >= 1");
    };
    with_value["--format"] = [&](const std::string& v) {
      if (v == "stencil")
        s.format = MatrixFormat::Stencil;
      else if (v == "crs")
        s.format = MatrixFormat::Crs;
      else
        e.push_back("--format '" + v + "': expected stencil or crs");
    };
    with_value["--proc-grid"] = [&](const std::string& v) {
      std::string why;
      std::array<int, 3> g{};
      if (!parse_grid(v, g, why))
        e.push_back("--proc-grid '" + v + "': " + why);
      else
        s.proc_grid = g;
    };
    with_value["--tol"] = [&](const std::string& v) {
      if (!parse_double(v, s.tol)) e.push_back("--tol '" + v + "': not a number");
    };
    with_value["--max-iters"] = [&](const std::string& v) {
      int_opt("--max-iters", 1, big, v, s.max_iters);
    };
    with_value["--repeat"] = [&](const std::string& v) { int_opt("--repeat", 1, 100000, v, s.repeat); };
    with_value["--json"] = [&](const std::string& v) { o.json_path = v; };
    with_value["--trace"] = [&](const std::string& v) {
      o.trace_path = v;
      s.trace = true;
    };
    with_value["--thread-level"] = [&](const std::string& v) {
      if (thread_level_from_name(v) < 0)
        e.push_back("--thread-level '" + v + "': expected single, funneled, serialized or multiple");
      else
        o.thread_level = v;
    };
    flags["--periodic"] = [&] { s.periodic = true; };
  }
  if (o.command == Command::Bench) {
    auto& b = o.bench;
    auto list = [&](const std::string& name, const std::string& v, auto&& one) {
      const auto parts = split(v, ',');
      if (v.empty()) e.push_back(name + " is empty: expected a comma-separated list");
      for (const auto& p : parts)
        if (!v.empty() && !one(p)) break;
    };
    with_value["--repeat"] = [&](const std::string& v) { int_opt("--repeat", 1, 100000, v, b.repeat); };
    with_value["--json"] = [&](const std::string& v) { o.json_path = v; };
    with_value["--lmax"] = [&](const std::string& v) {
      b.lmax_given = true;
      if (!parse_bytes(v, b.lmax))
        e.push_back("--lmax '" + v + "': expected a byte count such as 65536, 64kB or 8MB");
    };
    with_value["--sizes"] = [&](const std::string& v) {
      b.sizes.clear();
      list("--sizes", v, [&](const std::string& p) {
        long long x = 0;
        if (parse_bytes(p, x)) {
          b.sizes.push_back(x);
          return true;
        }
        e.push_back("--sizes '" + v + "': '" + p + "' is not a byte count such as 2MB");
        return false;
      });
    };
    auto int_list = [&](const std::string& name, long long lo, long long hi, std::vector<int>& to) {
      return [&, name, lo, hi](const std::string& v) {
        to.clear();
        list(name, v, [&](const std::string& p) {
          long long x = 0;
          if (parse_int(p, lo, hi, x)) {
            to.push_back(static_cast<int>(x));
            return true;
          }
          e.push_back(name + " '" + v + "': '" + p + "' is not an integer between " +
                      std::to_string(lo) + " and " + std::to_string(hi));
          return false;
        });
      };
    };
    with_value["--nk-loc"] = int_list("--nk-loc", 1, 1 << 20, b.nk_loc);
    with_value["--faces"] = int_list("--faces", 1, 4096, b.faces);
    with_value["--plane"] = [&](const std::string& v) { int_opt("--plane", 1, 1 << 20, v, b.plane); };
    with_value["--iters"] = [&](const std::string& v) { int_opt("--iters", 1, big, v, b.iters); };
  }

  const std::size_t first = o.command == Command::Bench && !o.bench.name.empty() ? 2 : 1;
  for (std::size_t i = first; i < args.size(); ++i) {
    std::string a = args[i];
    std::string value;
    bool inline_value = false;
    auto eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
      inline_value = true;
    }
    if (o.command == Command::Info && a == "--json") {
      // Optional value: a following word that is not an option is the path.
      if (inline_value)
        o.json_path = value;
      else if (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0)
        o.json_path = args[++i];
      else
        o.json_stdout = true;
      continue;
    }
    if (auto f = flags.find(a); f != flags.end()) {
      if (inline_value)
        e.push_back(a + " takes no value");
      else
        f->second();
      continue;
    }
    auto h = with_value.find(a);
    if (h == with_value.end()) {
      e.push_back("unknown option '" + args[i] + "' for 'hympi " + cmd + "' (see hympi " + cmd +
                  " --help)");
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= args.size()) {
        e.push_back(a + " needs a value");
        continue;
      }
      value = args[++i];
    }
    h->second(value);
  }
  if (o.help) {
    o.errors.clear();
    return o;
  }
  if (o.command == Command::Bench) {
    if (o.bench.name.empty())
      e.push_back("missing benchmark name (valid: " + bench::benchmark_names() + ")");
    else if (!bench::find_benchmark(o.bench.name))
      e.push_back("unknown benchmark '" + o.bench.name + "' (valid: " + bench::benchmark_names() + ")");
  }
  if (o.command == Command::Solve) {
    if (!have_kernel) e.push_back("missing --kernel (valid: " + names_of_kernels() + ")");
    if (!have_grid) e.push_back("missing --grid NXxNYxNZ");
  }
  return o;
}

nlohmann::json to_json(const Options& o) {
  const SolveConfig& s = o.solve;
  return {{"command", static_cast<int>(o.command)},
          {"help", o.help},
          {"json_path", o.json_path},
          {"trace_path", o.trace_path},
          {"json_stdout", o.json_stdout},
          {"thread_level", o.thread_level},
          {"kernel", static_cast<int>(s.kernel)},
          {"format", static_cast<int>(s.format)},
          {"scheme", s.scheme},
          {"grid", s.grid},
          {"periodic", s.periodic},
          {"iters", s.iters},
          {"threads", s.threads},
          {"reserved", s.reserved},
          {"tol", s.tol},
          {"max_iters", s.max_iters},
          {"repeat", s.repeat},
          {"ranks_per_node", s.ranks_per_node},
          {"rank_order", static_cast<int>(s.rank_order)},
          {"proc_grid", s.proc_grid},
          {"trace", s.trace},
          {"bench",
           {{"name", o.bench.name},
            {"repeat", o.bench.repeat},
            {"lmax", o.bench.lmax},
            {"lmax_given", o.bench.lmax_given},
            {"sizes", o.bench.sizes},
            {"plane", o.bench.plane},
            {"nk_loc", o.bench.nk_loc},
            {"iters", o.bench.iters},
            {"faces", o.bench.faces}}}};
}

Options from_json(const nlohmann::json& j) {
  Options o;
  o.command = static_cast<Command>(j.at("command").get<int>());
  o.help = j.at("help");
  o.json_path = j.at("json_path");
  o.trace_path = j.at("trace_path");
  o.json_stdout = j.at("json_stdout");
  o.thread_level = j.at("thread_level");
  SolveConfig& s = o.solve;
  s.kernel = static_cast<KernelKind>(j.at("kernel").get<int>());
  s.format = static_cast<MatrixFormat>(j.at("format").get<int>());
  s.scheme = j.at("scheme");
  s.grid = j.at("grid");
  s.periodic = j.at("periodic");
  s.iters = j.at("iters");
  s.threads = j.at("threads");
  s.reserved = j.at("reserved");
  s.tol = j.at("tol");
  s.max_iters = j.at("max_iters");
  s.repeat = j.at("repeat");
  s.ranks_per_node = j.at("ranks_per_node");
  s.rank_order = static_cast<RankOrder>(j.at("rank_order").get<int>());
  s.proc_grid = j.at("proc_grid");
  s.trace = j.at("trace");
  const auto& b = j.at("bench");
  o.bench.name = b.at("name");
  o.bench.repeat = b.at("repeat");
  o.bench.lmax = b.at("lmax");
  o.bench.lmax_given = b.at("lmax_given");
  o.bench.sizes = b.at("sizes").get<std::vector<long long>>();
  o.bench.plane = b.at("plane");
  o.bench.nk_loc = b.at("nk_loc").get<std::vector<int>>();
  o.bench.iters = b.at("iters");
  o.bench.faces = b.at("faces").get<std::vector<int>>();
  return o;
}

}  // namespace hympi::cli
