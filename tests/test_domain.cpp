// The user-kernel API (hympi::Domain) against a serial reference computed
// here: two coupled fields with a star stencil of radius `halo` (1 and 2),
// exchanged together in one message per face, under every scheme this MPI
// and thread count can run, Dirichlet and mixed periodic boundaries, the
// default and a slab decomposition. Each rank compares its own box point by
// point; sweep_sum's result is compared with the serial sum. Then the bad
// input of the API: a halo thicker than a rank's box, a field of the wrong
// shape, an update that throws (every rank finishes the sweep; the failing
// one gets a KernelError naming scheme and box), and the report document.
// Runs at any rank count with OMP_NUM_THREADS threads. Prints one line per
// failure and closes with "N passed, N failed, N skipped".
#include <mpi.h>
#include <omp.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hympi/hympi.hpp"

using namespace hympi;

namespace {

int g_rank = 0;
int g_size = 1;

struct Tally {
  int passed = 0, failed = 0, skipped = 0;
  void check(bool ok, const std::string& what) {
    // Every rank must agree on the outcome: a failure anywhere fails all.
    int mine = ok ? 0 : 1, any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any) {
      ++failed;
      if (!ok) std::printf("FAIL rank %d: %s\n", g_rank, what.c_str());
    } else {
      ++passed;
    }
  }
};

constexpr int kSteps = 3;

// Weights of the two coupled updates (any values: the test compares hympi
// with the same arithmetic done serially).
double initial_u(long long i, long long j, long long k) { return initial_value(i, j, k); }
double initial_v(long long i, long long j, long long k) { return 0.25 - initial_value(k, i, j); }

// The global grid for the serial reference: values outside a Dirichlet
// boundary are 0, a periodic axis wraps.
struct Global {
  std::array<int, 3> n;
  std::array<bool, 3> periodic;
  std::vector<double> u, v;
  double at(const std::vector<double>& a, long long i, long long j, long long k) const {
    long long c[3] = {i, j, k};
    for (int d = 0; d < 3; ++d) {
      if (c[d] >= 0 && c[d] < n[d]) continue;
      if (!periodic[d]) return 0.0;
      c[d] = ((c[d] % n[d]) + n[d]) % n[d];
    }
    return a[c[0] + 1LL * n[0] * (c[1] + 1LL * n[1] * c[2])];
  }
};

// The star sum of radius h around (i, j, k) of field `get`.
template <typename Get>
double star(Get&& get, int i, int j, int k, int h, double w) {
  double s = 0;
  for (int r = 1; r <= h; ++r) {
    const double wr = w / r;
    s += wr * (get(i - r, j, k) + get(i + r, j, k) + get(i, j - r, k) + get(i, j + r, k) +
               get(i, j, k - r) + get(i, j, k + r));
  }
  return s;
}

// One step of the coupled update at one point; returns u_new and v_new.
template <typename GetU, typename GetV>
std::array<double, 2> update_point(GetU&& u, GetV&& v, int i, int j, int k, int h) {
  const double un = 0.4 * u(i, j, k) + star(u, i, j, k, h, 0.05) + 0.1 * v(i, j, k);
  const double vn = 0.5 * v(i, j, k) + star(v, i, j, k, h, 0.04) - 0.05 * u(i + 1, j, k);
  return {un, vn};
}

// Serial: kSteps steps; returns the sum of u_new^2 of the last step.
double reference(Global& g, int h) {
  const int nx = g.n[0], ny = g.n[1], nz = g.n[2];
  g.u.assign(1LL * nx * ny * nz, 0);
  g.v.assign(g.u.size(), 0);
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        g.u[i + 1LL * nx * (j + 1LL * ny * k)] = initial_u(i, j, k);
        g.v[i + 1LL * nx * (j + 1LL * ny * k)] = initial_v(i, j, k);
      }
  double last_sum = 0;
  for (int s = 0; s < kSteps; ++s) {
    std::vector<double> un(g.u.size()), vn(g.v.size());
    last_sum = 0;
    auto gu = [&](int i, int j, int k) { return g.at(g.u, i, j, k); };
    auto gv = [&](int i, int j, int k) { return g.at(g.v, i, j, k); };
    for (int k = 0; k < nz; ++k)
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) {
          const auto r = update_point(gu, gv, i, j, k, h);
          un[i + 1LL * nx * (j + 1LL * ny * k)] = r[0];
          vn[i + 1LL * nx * (j + 1LL * ny * k)] = r[1];
          last_sum += r[0] * r[0];
        }
    g.u.swap(un);
    g.v.swap(vn);
  }
  return last_sum;
}

// hympi: the same steps through Domain::sweep_sum, v over the caller's own
// memory (wrap_field) to cover both kinds of field.
void run_case(Tally& tally, const SchemeEntry& scheme, int threads, int halo,
              std::array<bool, 3> periodic, std::array<int, 3> proc_grid, Global& ref,
              double ref_sum) {
  DomainConfig c;
  c.grid = ref.n;
  c.periodic = periodic;
  c.halo = halo;
  c.scheme = &scheme;
  c.threads = threads;
  c.proc_grid = proc_grid;
  c.on_error = KernelErrorPolicy::Throw;
  char label[200];
  std::snprintf(label, sizeof label, "%s halo %d periodic %d%d%d pg %dx%dx%d threads %d",
                scheme.info.name.c_str(), halo, periodic[0], periodic[1], periodic[2],
                proc_grid[0], proc_grid[1], proc_grid[2], threads);
  if (!validate_domain(c, g_size).empty()) {
    ++tally.skipped;
    return;
  }
  Domain d(MPI_COMM_WORLD, c);
  const LocalDomain& L = d.local();
  std::vector<double> v_mem(d.layout().count, 0.0), v2_mem(d.layout().count, 0.0);
  Field u = d.make_field(), u2 = d.make_field();
  Field v = d.wrap_field(v_mem.data()), v2 = d.wrap_field(v2_mem.data());
  const Box b = L.box();
  for (int k = b.lo[2]; k < b.hi[2]; ++k)
    for (int j = b.lo[1]; j < b.hi[1]; ++j)
      for (int i = b.lo[0]; i < b.hi[0]; ++i) {
        u.at(i, j, k) = initial_u(L.offset[0] + i, L.offset[1] + j, L.offset[2] + k);
        v.at(i, j, k) = initial_v(L.offset[0] + i, L.offset[1] + j, L.offset[2] + k);
      }
  Field *cu = &u, *cv = &v, *nu = &u2, *nv = &v2;
  double sum = 0;
  d.start_clock();
  for (int s = 0; s < kSteps; ++s) {
    sum = d.sweep_sum({cu, cv}, [&](const Box& box, int) {
      double part = 0;
      auto gu = [&](int i, int j, int k) { return cu->at(i, j, k); };
      auto gv = [&](int i, int j, int k) { return cv->at(i, j, k); };
      for (int k = box.lo[2]; k < box.hi[2]; ++k)
        for (int j = box.lo[1]; j < box.hi[1]; ++j)
          for (int i = box.lo[0]; i < box.hi[0]; ++i) {
            const auto r = update_point(gu, gv, i, j, k, halo);
            nu->at(i, j, k) = r[0];
            nv->at(i, j, k) = r[1];
            part += r[0] * r[0];
          }
      return part;
    });
    std::swap(cu, nu);
    std::swap(cv, nv);
  }
  d.stop_clock();
  double worst = 0;
  for (int k = b.lo[2]; k < b.hi[2]; ++k)
    for (int j = b.lo[1]; j < b.hi[1]; ++j)
      for (int i = b.lo[0]; i < b.hi[0]; ++i) {
        const long long gi = L.offset[0] + i, gj = L.offset[1] + j, gk = L.offset[2] + k;
        worst = std::max(worst, std::fabs(cu->at(i, j, k) - ref.at(ref.u, gi, gj, gk)));
        worst = std::max(worst, std::fabs(cv->at(i, j, k) - ref.at(ref.v, gi, gj, gk)));
      }
  tally.check(worst <= 1e-13, std::string(label) + ": field differs by " + std::to_string(worst));
  tally.check(std::fabs(sum - ref_sum) <= 1e-12 * ref_sum,
              std::string(label) + ": sweep_sum " + std::to_string(sum) + " vs " +
                  std::to_string(ref_sum));
  tally.check(d.sweeps() == kSteps, std::string(label) + ": sweeps counted");
  tally.check(d.plan().field_count() == 2, std::string(label) + ": two fields per message");
}

// begin_sum / end_sum (pipelined cg's overlapped reduction) under a scheme:
// the sums of a sweep's worth of overlap are those of allreduce_sum, the
// sweep's values are unharmed, misuse is a UsageError, and a Domain left
// with a sum in flight waits for it (no hang, no leak).
void overlapped_sum(Tally& tally, const SchemeEntry& scheme, int threads) {
  DomainConfig c;
  c.grid = {12, 10, 9};
  c.scheme = &scheme;
  c.threads = threads;
  const std::string name = scheme.info.name + ": ";
  {
    Domain d(MPI_COMM_WORLD, c);
    Field u = d.make_field();
    d.begin_sum({g_rank + 1.0, 2.0, -0.5});
    const double swept = d.sweep_sum({&u}, [&](const Box& b, int) { return 1.0 * b.points(); });
    const std::vector<double> sums = d.end_sum();
    const double n = g_size;
    tally.check(sums.size() == 3 && sums[0] == n * (n + 1) / 2 && sums[1] == 2 * n && sums[2] == -0.5 * n,
                name + "end_sum gives the sums over ranks");
    tally.check(swept == 12.0 * 10 * 9, name + "a sweep with a sum in flight covers every point once");
    bool refused[3] = {false, false, false};
    try {
      d.end_sum();
    } catch (const UsageError&) {
      refused[0] = true;
    }
    try {
      d.begin_sum({});
    } catch (const UsageError&) {
      refused[1] = true;
    }
    d.begin_sum({1.0});
    try {
      d.begin_sum({1.0});
    } catch (const UsageError&) {
      refused[2] = true;
    }
    tally.check(refused[0] && refused[1] && refused[2],
                name + "end_sum without begin_sum, no values, two in flight: refused");
    // Left in flight: the destructor waits for it on every rank.
  }
  tally.check(true, name + "a Domain destroyed with a sum in flight returns");
}

// sweep_block with a first-sweep update: the block's first sweep runs
// `first`, the others `update`, through the scheme's first sweep (where it
// overlaps) and the wavefront alike; a later block without `first` runs
// `update` only. Pointwise updates, so every point's value says which ran.
void first_sweep_update(Tally& tally, const SchemeEntry& scheme, int threads) {
  DomainConfig c;
  c.grid = {12, 10, 9};
  c.scheme = &scheme;
  c.threads = threads;
  c.halo_depth = 3;
  Domain d(MPI_COMM_WORLD, c);
  const LocalDomain& l = d.local();
  Field a = d.make_field(), b = d.make_field();
  const auto value = [&l](int i, int j, int k) {
    return 1.0 + (l.offset[0] + i) + 16.0 * (l.offset[1] + j) + 256.0 * (l.offset[2] + k);
  };
  for (int k = 0; k < l.size[2]; ++k)
    for (int j = 0; j < l.size[1]; ++j)
      for (int i = 0; i < l.size[0]; ++i) a.at(i, j, k) = value(i, j, k);
  const auto pointwise = [](double add, double times) {
    return [add, times](const Field& in, Field& out, const Box& box, int) {
      for (int k = box.lo[2]; k < box.hi[2]; ++k)
        for (int j = box.lo[1]; j < box.hi[1]; ++j)
          for (int i = box.lo[0]; i < box.hi[0]; ++i) out.at(i, j, k) = (in.at(i, j, k) + add) * times;
    };
  };
  Field* in = &a;
  Field* out = &b;
  d.sweep_block(in, out, 3, pointwise(1.0, 1.0), pointwise(0.0, 2.0));
  d.sweep_block(in, out, 2, pointwise(0.0, 2.0));
  long long wrong = 0;
  for (int k = 0; k < l.size[2]; ++k)
    for (int j = 0; j < l.size[1]; ++j)
      for (int i = 0; i < l.size[0]; ++i) wrong += in->at(i, j, k) != (value(i, j, k) + 1.0) * 16.0;
  long long wrong_all = 0;
  MPI_Allreduce(&wrong, &wrong_all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  tally.check(wrong_all == 0 && in == &b,
              scheme.info.name + ": sweep_block runs `first` for the block's first sweep only");
}

void bad_input(Tally& tally, const SchemeEntry& scheme, int threads) {
  // A halo thicker than the thinnest box.
  DomainConfig thick;
  thick.grid = {2 * g_size - 1, 3, 3};  // the thinnest box along x has 1 point
  thick.halo = 2;
  thick.proc_grid = {g_size, 1, 1};
  thick.periodic = {true, false, false};
  const auto errors = validate_domain(thick, g_size);
  bool named = false;
  for (const auto& e : errors) named = named || e.find("`halo` 2 needs at least 2 points") == 0;
  tally.check(named, "a halo thicker than a rank's box is refused");
  bool threw = false;
  try {
    Domain d(MPI_COMM_WORLD, thick);
  } catch (const UsageError&) {
    threw = true;
  }
  tally.check(threw, "Domain throws UsageError for it on every rank");
  DomainConfig flat;
  flat.grid = {8, 8, 8};
  flat.wavefront_planes = 5;
  named = false;
  for (const auto& e : validate_domain(flat, g_size))
    named = named || e == "`wavefront_planes` 5 is out of range: accepted 1 .. 4";
  tally.check(named, "wavefront_planes 5 is refused by name");

  DomainConfig c;
  c.grid = {12, 10, 9};
  c.scheme = &scheme;
  c.threads = threads;
  c.on_error = KernelErrorPolicy::Throw;
  Domain d(MPI_COMM_WORLD, c);
  Field u = d.make_field(), w = d.make_field();
  // Each field made starts one place further in its 4 KiB page (Field's
  // stagger), from place 1 (place 0 is near where malloc's arrays start):
  // w where the domain's second field belongs, not where u is.
  const auto page_offset = [](const Field& f) {
    return reinterpret_cast<std::uintptr_t>(f.data()) % 4096;
  };
  const std::size_t step = stagger_bytes(u.stride_j(), u.stride_k(), 1);
  tally.check(step != 0 && page_offset(u) == step &&
                  page_offset(w) == stagger_bytes(u.stride_j(), u.stride_k(), 2),
              "make_field staggers consecutive fields in the page, from place 1");
  Field wrong({3, 3, 3});
  threw = false;
  try {
    d.sweep({&wrong}, [](const Box&, int) {});
  } catch (const UsageError& e) {
    threw = std::string(e.what()).find("field 0 of the sweep is 3x3x3") == 0;
  }
  tally.check(threw, "a field of another shape is refused by name");
  // Packed and padded rows in one sweep: refused (an update indexes them with
  // one index); padded fields alone exchange like packed ones.
  Field padded = d.make_field(RowLayout::CacheLine), padded2 = d.make_field(RowLayout::CacheLine);
  const std::string mixed = "field 1 of the sweep has CacheLine rows and field 0 Packed rows";
  threw = false;
  try {
    d.sweep({&u, &padded}, [](const Box&, int) {});
  } catch (const UsageError& e) {
    threw = std::string(e.what()).find(mixed) == 0;
  }
  // By kind: refused on every rank, also where the packed rows are whole
  // lines already and the strides agree.
  tally.check(threw, "packed and padded rows in one sweep are refused");
  threw = false;
  Field* in = &u;
  Field* out = &padded;
  try {
    d.sweep_block(in, out, 1, [](const Field&, Field&, const Box&, int) {});
  } catch (const UsageError& e) {
    threw = std::string(e.what()).find(mixed) == 0;
  }
  tally.check(threw, "sweep_block refuses packed and padded rows too");
  {
    const LocalDomain& l = d.local();
    const double mine = 1.0 + g_rank;  // each rank's value; halos must bring the neighbours'
    for (int k = 0; k < l.size[2]; ++k)
      for (int j = 0; j < l.size[1]; ++j)
        for (int i = 0; i < l.size[0]; ++i) padded.at(i, j, k) = mine;
    d.sweep({&padded, &padded2}, [](const Box&, int) {});
    bool halos_right = true;
    for (int dir = 0; dir < 6; ++dir) {
      if (!l.has_neighbour(dir)) continue;
      const int axis = dir / 2;
      std::array<int, 3> p{l.size[0] / 2, l.size[1] / 2, l.size[2] / 2};
      p[axis] = dir % 2 == 0 ? -1 : l.size[axis];
      halos_right = halos_right && padded.at(p[0], p[1], p[2]) == 1.0 + l.neighbour[dir];
    }
    tally.check(halos_right, "padded fields get their neighbours' halos");
  }

  // The last rank's update throws on its first box; every rank completes the
  // sweep (no hang), the failing one gets KernelError naming scheme and box.
  const int bad = g_size - 1;
  std::string message;
  try {
    d.sweep({&u}, [&](const Box& box, int) {
      if (g_rank == bad && !box.empty()) throw std::runtime_error("negative density");
      for (int k = box.lo[2]; k < box.hi[2]; ++k)
        for (int j = box.lo[1]; j < box.hi[1]; ++j)
          for (int i = box.lo[0]; i < box.hi[0]; ++i) w.at(i, j, k) = u.at(i, j, k) + 1;
    });
  } catch (const KernelError& e) {
    message = e.what();
  }
  const bool named_box = message.find("scheme '" + scheme.info.name + "' on box [") !=
                             std::string::npos &&
                         message.find("negative density") != std::string::npos;
  tally.check(g_rank == bad ? named_box : message.empty(),
              "a throwing update fails on its rank only, naming scheme and box: '" + message + "'");
  // The exchange completed everywhere: the next sweep runs and agrees.
  const double after = d.sweep_sum({&u}, [&](const Box& box, int) { return 1.0 * box.points(); });
  tally.check(after == 12.0 * 10 * 9, "the domain keeps working after a failed update");

  // The report: valid JSON with the solve record's fields.
  char path[64];
  std::snprintf(path, sizeof path, "/tmp/hympi_test_domain_%d.json", static_cast<int>(getpid()));
  std::string shared(path);
  int len = static_cast<int>(shared.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
  shared.resize(len);
  MPI_Bcast(&shared[0], len, MPI_CHAR, 0, MPI_COMM_WORLD);
  d.start_clock();
  for (int s = 0; s < 2; ++s) d.sweep({&u, &w}, [](const Box&, int) {});
  d.stop_clock();
  d.write_report(shared, "test", {&u});
  bool report_ok = true;
  if (g_rank == 0) {
    try {
      std::ifstream in(shared);
      const auto doc = nlohmann::json::parse(in);
      const auto& r = doc.at("results").at(0);
      report_ok = r.at("kernel") == "user:test" && r.at("scheme") == scheme.info.name &&
                  r.at("iters") == 2 && r.at("breakdown_s").at("comm").size() == 1u * threads &&
                  r.at("user_kernel") == true && doc.at("context").at("ranks") == g_size &&
                  r.at("messages_per_exchange").at("intra_node").get<long long>() +
                          r.at("messages_per_exchange").at("inter_node").get<long long>() >=
                      0;
    } catch (const std::exception& e) {
      std::printf("report: %s\n", e.what());
      report_ok = false;
    }
    std::remove(shared.c_str());
  }
  tally.check(report_ok, "write_report writes the solve-shaped document");
  threw = false;
  try {
    d.write_report("/nonexistent-dir/report.json", "test");
  } catch (const OutputError& e) {
    threw = std::string(e.what()).find("cannot write /nonexistent-dir/report.json") == 0;
  }
  tally.check(threw, "an unwritable report path is an OutputError on every rank");
}

// OpenMP gives a sweep fewer threads than the domain was built for (here:
// nested parallelism off, as inside a user's parallel region): the sweep
// fails with the scheme's message on every rank, without a hang, and the
// next sweep with the threads back runs and exchanges correctly. For
// partitioned this means its persistent requests were completed.
void thread_shortfall(Tally& tally, const SchemeEntry& scheme, int threads) {
  DomainConfig c;
  c.grid = {12, 10, 9};
  c.scheme = &scheme;
  c.threads = threads;
  std::unique_ptr<Domain> made;
  try {
    made = std::make_unique<Domain>(MPI_COMM_WORLD, c);
  } catch (const UsageError&) {  // the same on every rank (shared-window on 1 rank per node)
    ++tally.skipped;
    return;
  }
  Domain& d = *made;
  Field u = d.make_field();
  const LocalDomain& L = d.local();
  auto fill = [&](double shift) {
    const Box b = L.box();
    for (int k = b.lo[2]; k < b.hi[2]; ++k)
      for (int j = b.lo[1]; j < b.hi[1]; ++j)
        for (int i = b.lo[0]; i < b.hi[0]; ++i)
          u.at(i, j, k) = shift + initial_u(L.offset[0] + i, L.offset[1] + j, L.offset[2] + k);
  };
  fill(1000.0);  // what a stale halo would hold after the next sweep
  const int levels = omp_get_max_active_levels();
  omp_set_max_active_levels(0);
  std::string message;
  try {
    d.sweep({&u}, [](const Box&, int) {});
  } catch (const std::exception& e) {
    message = e.what();
  }
  omp_set_max_active_levels(levels);
  tally.check(message.find("OpenMP gave 1 threads, the scheme needs " + std::to_string(threads)) !=
                  std::string::npos,
              scheme.info.name + ": a sweep on too few threads fails on every rank: '" + message + "'");
  // The next sweep exchanges this sweep's values: every face neighbour of
  // every point (inside the grid) holds its global value.
  fill(0.0);
  const double wrong = d.sweep_sum({&u}, [&](const Box& box, int) {
    double bad = 0;
    for (int k = box.lo[2]; k < box.hi[2]; ++k)
      for (int j = box.lo[1]; j < box.hi[1]; ++j)
        for (int i = box.lo[0]; i < box.hi[0]; ++i)
          for (int dir = 0; dir < kDirections; ++dir) {
            std::array<int, 3> at{i, j, k};
            at[dir_axis(dir)] += dir_side(dir) == 0 ? -1 : 1;
            const int a = dir_axis(dir), global = L.offset[a] + at[a];
            if (global < 0 || global >= c.grid[a]) continue;  // outside the grid (Dirichlet)
            const double want =
                initial_u(L.offset[0] + at[0], L.offset[1] + at[1], L.offset[2] + at[2]);
            if (u.at(at[0], at[1], at[2]) != want) ++bad;
          }
    return bad;
  });
  tally.check(wrong == 0, scheme.info.name + ": the next sweep exchanges this sweep's values (" +
                              std::to_string(wrong) + " wrong neighbour values)");
}

// --abort: the default policy. The last rank's update throws in the second
// sweep; the others go on to a third and a barrier, which would wait for it
// forever: the job must end (ctest checks the line and that it ends within its timeout).
int abort_case(int threads) {
  DomainConfig c;
  c.grid = {12, 10, 9};
  c.threads = threads;
  Domain d(MPI_COMM_WORLD, c);
  Field u = d.make_field();
  for (int s = 0; s < 3; ++s)
    d.sweep({&u}, [&](const Box& box, int) {
      if (s == 1 && g_rank == g_size - 1 && !box.empty()) throw std::runtime_error("NaN at step 1");
    });
  MPI_Barrier(MPI_COMM_WORLD);  // a rank that is not the failing one's neighbour gets here
  std::printf("rank %d: not stopped\n", g_rank);
  return 1;
}

// --funneled: MPI initialised with MPI_THREAD_FUNNELED; a scheme that needs
// MPI_THREAD_MULTIPLE is refused on every rank with both levels named.
int funneled_case(int provided) {
  Tally tally;
  for (const auto& scheme : scheme_registry()) {
    if (scheme.info.thread_level <= provided || !scheme.info.unavailable.empty()) continue;
    DomainConfig c;
    c.grid = {8, 8, 8};
    c.scheme = &scheme;
    c.threads = std::max(2, scheme.info.min_threads);
    std::string message;
    try {
      Domain d(MPI_COMM_WORLD, c);
    } catch (const UsageError& e) {
      message = e.what();
    }
    tally.check(message == "scheme '" + scheme.info.name + "' needs " +
                               thread_level_name(scheme.info.thread_level) +
                               ", but MPI was initialised with " + thread_level_name(provided),
                scheme.info.name + ": '" + message + "'");
  }
  if (g_rank == 0)
    std::printf("%d passed, %d failed, %d skipped\n", tally.passed, tally.failed, tally.skipped);
  MPI_Finalize();
  return tally.failed || tally.passed == 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  const bool funneled = argc > 1 && std::string(argv[1]) == "--funneled";
  MPI_Init_thread(&argc, &argv, funneled ? MPI_THREAD_FUNNELED : MPI_THREAD_MULTIPLE, &provided);
  if (funneled) {
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    return funneled_case(provided);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const int threads = omp_get_max_threads();
  if (argc > 1 && std::string(argv[1]) == "--abort") return abort_case(threads);
  Tally tally;
  try {
    const std::array<int, 3> grid{11, 9, 10};
    const std::array<std::array<bool, 3>, 2> periodics{{{false, false, false}, {true, false, true}}};
    for (int halo = 1; halo <= 2; ++halo)
      for (const auto& periodic : periodics) {
        Global ref{grid, periodic, {}, {}};
        const double ref_sum = reference(ref, halo);
        for (const auto& scheme : scheme_registry()) {
          if (provided < scheme.info.thread_level || threads < scheme.info.min_threads) {
            ++tally.skipped;
            continue;
          }
          run_case(tally, scheme, threads, halo, periodic, {0, 0, 0}, ref, ref_sum);
          run_case(tally, scheme, threads, halo, periodic, {1, 1, g_size}, ref, ref_sum);
        }
      }
    bad_input(tally, pure_mpi_scheme(), threads);
    for (const auto& scheme : scheme_registry())
      if (provided >= scheme.info.thread_level && scheme.info.unavailable.empty() &&
          threads >= scheme.info.min_threads && !(scheme.info.needs_node_peers && g_size < 2))
        overlapped_sum(tally, scheme, threads);
    for (const auto& scheme : scheme_registry())
      if (provided >= scheme.info.thread_level && scheme.info.unavailable.empty() &&
          threads >= scheme.info.min_threads && !(scheme.info.needs_node_peers && g_size < 2))
        first_sweep_update(tally, scheme, threads);
    if (threads > 1)
      for (const auto& scheme : scheme_registry())
        if (provided >= scheme.info.thread_level && scheme.info.unavailable.empty() &&
            threads >= scheme.info.min_threads)
          thread_shortfall(tally, scheme, threads);
  } catch (const std::exception& e) {
    std::printf("rank %d: %s\n", g_rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (g_rank == 0)
    std::printf("%d passed, %d failed, %d skipped\n", tally.passed, tally.failed, tally.skipped);
  MPI_Finalize();
  return tally.failed ? 1 : 0;
}
