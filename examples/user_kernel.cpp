// A user's own kernel under every hympi scheme: a 7-point smoother with a
// variable coefficient on two coupled fields (say, two species),
//   u' = u + w c (S(u) - 6 u) + k (v - u)
//   v' = v + w c (S(v) - 6 v) + k (u - v)
// where S is the sum of the six neighbours and c = 1 + ((i + 2j + 3k) % 5) / 10
// on global indices. Both fields' halos travel in one message per
// neighbour and direction; the change of each step is summed with one
// MPI_Allreduce. The scheme is chosen at run time:
//
//   mpirun -n 4 ./user_kernel --scheme funneled --threads 3 --grid 64 --steps 20
//
// Every scheme prints the same checksums (to round-off). Build against an
// installed hympi with find_package(hympi) and target hympi::hympi.
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hympi/hympi.hpp"

namespace {

constexpr double kOmega = 0.1;     // w: diffusion step (stable: w * max c * 12 < 2)
constexpr double kCoupling = 0.05; // k: exchange between the two fields

struct Options {
  std::array<int, 3> grid{32, 32, 32};
  int steps = 10;
  std::string scheme = "masteronly";
  int threads = 1;
  int reserved = 0;
  bool periodic = false;
  std::string report;  // --report PATH (hympi-lab study --app sets HYMPI_REPORT_JSON)
};

const char* kUsage =
    "usage: user_kernel [--grid N | --grid NXxNYxNZ] [--steps N] [--scheme NAME]\n"
    "                   [--threads N] [--reserved M] [--periodic] [--report PATH]\n";

// A positive integer, or "" and ok = false.
int parse_positive(const char* text, bool& ok) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  ok = end != text && *end == '\0' && v >= 0 && v <= 1L << 30;
  return ok ? static_cast<int>(v) : 0;
}

// Returns "" or the problem (the same on every rank: all ranks parse argv).
std::string parse(int argc, char** argv, Options& o, bool& help) {
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--help" || arg == "-h") {
      help = true;
      return "";
    }
    if (arg == "--periodic") {
      o.periodic = true;
      continue;
    }
    if (a + 1 >= argc) return "option " + arg + " needs a value";
    const char* value = argv[++a];
    bool ok = true;
    if (arg == "--grid") {
      int n[3];
      if (std::sscanf(value, "%dx%dx%d", &n[0], &n[1], &n[2]) == 3)
        o.grid = {n[0], n[1], n[2]};
      else
        o.grid[0] = o.grid[1] = o.grid[2] = parse_positive(value, ok);
      ok = ok && o.grid[0] > 0 && o.grid[1] > 0 && o.grid[2] > 0;
    } else if (arg == "--steps") {
      o.steps = parse_positive(value, ok);
    } else if (arg == "--threads") {
      o.threads = parse_positive(value, ok);
    } else if (arg == "--reserved") {
      o.reserved = parse_positive(value, ok);
    } else if (arg == "--scheme") {
      o.scheme = value;
    } else if (arg == "--report") {
      o.report = value;
    } else {
      return "unknown option " + arg;
    }
    if (!ok) return "bad value '" + std::string(value) + "' for " + arg;
  }
  return "";
}

double coefficient(long long i, long long j, long long k) {
  return 1.0 + static_cast<double>((i + 2 * j + 3 * k) % 5) / 10.0;
}

// The smoother on one box: reads u, v (halos included) and c, writes u2, v2;
// returns the box's sum of squared changes.
double smooth_box(const hympi::Field& u, const hympi::Field& v, const hympi::Field& c,
                  hympi::Field& u2, hympi::Field& v2, const hympi::Box& box) {
  const std::ptrdiff_t sj = u.stride_j(), sk = u.stride_k();
  const double* pu = u.data();
  const double* pv = v.data();
  const double* pc = c.data();
  double* qu = u2.data();
  double* qv = v2.data();
  double change = 0;
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      const std::ptrdiff_t row = u.index(0, j, k);
      for (int i = box.lo[0]; i < box.hi[0]; ++i) {
        const std::ptrdiff_t p = row + i;
        const double su = pu[p - 1] + pu[p + 1] + pu[p - sj] + pu[p + sj] + pu[p - sk] + pu[p + sk];
        const double sv = pv[p - 1] + pv[p + 1] + pv[p - sj] + pv[p + sj] + pv[p - sk] + pv[p + sk];
        const double wc = kOmega * pc[p];
        const double un = pu[p] + wc * (su - 6 * pu[p]) + kCoupling * (pv[p] - pu[p]);
        const double vn = pv[p] + wc * (sv - 6 * pv[p]) + kCoupling * (pu[p] - pv[p]);
        change += (un - pu[p]) * (un - pu[p]) + (vn - pv[p]) * (vn - pv[p]);
        qu[p] = un;
        qv[p] = vn;
      }
    }
  return change;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  Options o;
  bool help = false;
  std::string problem = parse(argc, argv, o, help);
  hympi::DomainConfig config;
  if (problem.empty() && !help) {
    config.grid = o.grid;
    config.periodic = {o.periodic, o.periodic, o.periodic};
    config.scheme = hympi::find_scheme(o.scheme);
    config.threads = o.threads;
    config.reserved = o.reserved;
    if (!config.scheme)
      problem = "unknown scheme '" + o.scheme + "' (one of: " + hympi::scheme_names() + ")";
    else
      for (const auto& e : hympi::validate_domain(config, size)) problem += (problem.empty() ? "" : "; ") + e;
  }
  if (help || !problem.empty()) {
    if (rank == 0) {
      if (!problem.empty()) std::fprintf(stderr, "user_kernel: %s\n", problem.c_str());
      std::fputs(kUsage, help ? stdout : stderr);
    }
    MPI_Finalize();
    return help ? 0 : 2;
  }

  int status = 0;
  try {
    hympi::Domain domain(MPI_COMM_WORLD, config);
    const hympi::LocalDomain& local = domain.local();
    // u and v (and their next values) allocated by hympi; the coefficient in
    // the program's own array, registered with wrap_field.
    hympi::Field u = domain.make_field(), v = domain.make_field();
    hympi::Field u2 = domain.make_field(), v2 = domain.make_field();
    std::vector<double> c_memory(domain.layout().count, 0.0);
    hympi::Field c = domain.wrap_field(c_memory.data());
    const hympi::Box box = local.box();
    for (int k = box.lo[2]; k < box.hi[2]; ++k)
      for (int j = box.lo[1]; j < box.hi[1]; ++j)
        for (int i = box.lo[0]; i < box.hi[0]; ++i) {
          const long long gi = local.offset[0] + i, gj = local.offset[1] + j,
                          gk = local.offset[2] + k;
          u.at(i, j, k) = hympi::initial_value(gi, gj, gk);
          v.at(i, j, k) = hympi::initial_value(gk, gi, gj);
          c.at(i, j, k) = coefficient(gi, gj, gk);
        }

    hympi::Field *cu = &u, *cv = &v, *nu = &u2, *nv = &v2;
    double change = 0;
    domain.start_clock();
    for (int s = 0; s < o.steps; ++s) {
      change = domain.sweep_sum({cu, cv}, [&](const hympi::Box& b, int) {
        return smooth_box(*cu, *cv, c, *nu, *nv, b);
      });
      std::swap(cu, nu);
      std::swap(cv, nv);
    }
    domain.stop_clock();

    const auto su = domain.checksum(*cu);
    const auto sv = domain.checksum(*cv);
    if (!o.report.empty() || std::getenv("HYMPI_REPORT_JSON"))
      domain.write_report(o.report, "smoother", {cu, cv});
    if (rank == 0) {
      std::printf("# user_kernel: scheme %s, %d ranks x %d threads, grid %dx%dx%d%s, %d steps\n",
                  o.scheme.c_str(), size, o.threads, o.grid[0], o.grid[1], o.grid[2],
                  o.periodic ? " periodic" : "", o.steps);
      std::printf("u sum %.12e l2 %.12e\n", su[0], su[1]);
      std::printf("v sum %.12e l2 %.12e\n", sv[0], sv[1]);
      std::printf("change %.12e\n", std::sqrt(change));
      std::printf("time %.6f s\n", domain.elapsed());
    }
  } catch (const hympi::UsageError& e) {
    if (rank == 0) std::fprintf(stderr, "user_kernel: %s\n", e.what());
    status = 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "user_kernel: rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}
