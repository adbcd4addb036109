// Kernel speed against the memory-bandwidth roofline, measured in one
// invocation: STREAM copy (b[i] = a[i], 16 B per element: one read, one
// write) interleaved with hympi's jacobi and spmv (stencil, CRS, SELL)
// through the library's solve() path, and the same jacobi and matrix-free
// spmv with temporal blocking (--halo-depth), and rbgs at depth 1 and H (H
// colours per exchange; depth-H over depth-1 per round below the table).
// Each round runs every
// measurement once; the ratios come from the medians over rounds, because
// the machine is shared and noisy. With several ranks every rank copies its
// share of the grid at once (the aggregate rate, timed between barriers).
//
// ratio = (LUP/s x bytes per point) / copy bandwidth, with the bytes per
// point each kernel declares in its KernelInfo for one sweep. Jacobi streams
// u in and u_new out, as copy does, so its ratio is its share of the copy
// rate; a temporally blocked run above 1.0 beats the single-sweep roofline.
// jacobi and spmv-stencil run with --stores auto (streaming on the default
// grid: stores that skip the write-allocate read), jacobi-cached and
// stencil-cached with ordinary stores; a streaming kernel's fair reference
// is the copy with streaming stores (stream-copy-nt, column of-nt-copy).
// The *-in-cache cases run the same kernels on 256 x 16 x 16 points per thread,
// each rank its own grid (no exchange), all at once, their rates summed
// (fields of 1 MB, a CRS matrix of 7 MB), which stay in cache: the rate the
// cores reach when memory is not the limit, the ceiling of any temporal
// blocking on this machine. The traffic model below the table adds the two
// times per point, core (in cache) and memory (bytes at the copy rate):
//   model MLUP/s = 1 / (1 / in-cache rate + bytes per point / copy bandwidth)
// and prints measured / model: near 1 when the kernel overlaps none of its
// memory time with its own work, near in-cache / model when it overlaps all.
// The blocked jacobi and spmv get the same row with the wavefront's own
// traffic per update (tiles of the height the run used, below the table).
//
//   hympi_roofline [--grid N] [--iters T] [--rounds R] [--threads N] [--halo-depth H]
#include <mpi.h>
#include <omp.h>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "hympi/hympi.hpp"

namespace {

// STREAM copy moves one double in and one out per element.
constexpr double kCopyBytesPerElement = 2 * sizeof(double);
// The bytes an ordinary-store copy really moves per byte counted: it also
// reads each line it writes (24 B per 16 B).
constexpr double kCopyTrafficPerCounted = 24.0 / 16.0;

// A whole-string positive int, or false (no atoi: "12x", "" and overflow
// are errors, not 12, 0 or garbage).
bool parse_positive(const char* text, int& out) {
  if (*text == '\0') return false;
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || v < 1 || v > INT_MAX) return false;
  out = static_cast<int>(v);
  return true;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// A plain loop with ordinary stores, as STREAM's copy is usually built. GCC
// would otherwise turn it into memcpy, whose non-temporal stores skip the
// write-allocate traffic that every stencil store pays.
__attribute__((noinline, optimize("no-tree-loop-distribute-patterns"))) void copy_loop(
    const double* __restrict a, double* __restrict b, long n) {
#pragma omp parallel for simd schedule(static)
  for (long i = 0; i < n; ++i) b[i] = a[i];
}

// The same copy with streaming (non-temporal) stores, the widest the build
// has: no write-allocate read, 16 B of traffic per element instead of 24.
// The reference for the kernels' --stores streaming (a and b 64-byte
// aligned, n a multiple of 8). Written here, not taken from the library,
// as copy_loop is: the reference must not move when a kernel does. Run
// only where hympi::streaming_stores_available() (the same build flags).
void copy_loop_streaming(const double* __restrict a, double* __restrict b, long n) {
#if defined(__SSE2__)
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i += 8) {
#if defined(__AVX512F__)
    _mm512_stream_pd(b + i, _mm512_load_pd(a + i));
#elif defined(__AVX__)
    _mm256_stream_pd(b + i, _mm256_load_pd(a + i));
    _mm256_stream_pd(b + i + 4, _mm256_load_pd(a + i + 4));
#else
    for (int l = 0; l < 8; l += 2) _mm_stream_pd(b + i + l, _mm_load_pd(a + i + l));
#endif
  }
  _mm_sfence();
#else
  (void)a, (void)b, (void)n;
#endif
}

// An array of n doubles on a 64-byte boundary, on huge pages where the
// system gives them (as every Field asks: hympi::advise_huge_pages), first
// touched by the threads that copy it (the static schedule of the copy loops).
struct AlignedFree {
  void operator()(double* p) const { std::free(p); }
};
std::unique_ptr<double[], AlignedFree> aligned_array(long n, double value) {
  const std::size_t bytes = (static_cast<std::size_t>(n) * sizeof(double) + 63) / 64 * 64;
  double* p = static_cast<double*>(std::aligned_alloc(64, bytes));
  if (!p) {
    std::fprintf(stderr, "hympi_roofline: cannot allocate %zu bytes\n", bytes);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  hympi::advise_huge_pages(p, bytes);
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) p[i] = value;
  return std::unique_ptr<double[], AlignedFree>(p);
}

struct Options {
  int n = 256, iters = 16, rounds = 5, threads = 1, depth = 8;
};

// The command line into `o`: -1 to go on, else the exit status (--help: 0,
// bad input: 2, said on rank 0).
int parse_options(int argc, char** argv, int rank, Options& o) {
  for (int i = 1; i < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      if (rank == 0)
        std::printf(
            "usage: hympi_roofline [--grid N] [--iters T] [--rounds R] [--threads N] "
            "[--halo-depth H]\n\n"
            "STREAM copy and hympi's kernels (jacobi, spmv stencil/crs/sell, rbgs; with\n"
            "--halo-depth H, and in cache) interleaved in R rounds; prints MLUP/s, bytes and the\n"
            "ratio to the copy rate (medians), a traffic model, and each blocked kernel over its\n"
            "depth-1 run, round by round. Defaults: --grid 256 (N^3), --iters\n"
            "16, --rounds 5, --threads 1, --halo-depth 8 (1..64). Launch it with mpirun, or\n"
            "through bench/run_roofline.sh (binding) or make bench.\n");
      return 0;
    }
    int v = 0;
    if (i + 1 >= argc || !parse_positive(argv[i + 1], v)) {
      if (rank == 0) std::fprintf(stderr, "hympi_roofline: %s needs a positive integer\n", a.c_str());
      return 2;
    }
    if (a == "--grid") o.n = v;
    else if (a == "--iters") o.iters = v;
    else if (a == "--rounds") o.rounds = v;
    else if (a == "--threads") o.threads = v;
    else if (a == "--halo-depth" && v <= 64) o.depth = v;
    else {
      if (rank == 0)
        std::fprintf(stderr, "hympi_roofline: unknown option %s (or --halo-depth above 64)\n",
                     a.c_str());
      return 2;
    }
  }
  return -1;
}

struct Case {
  std::string name;
  hympi::KernelKind kernel;
  hympi::MatrixFormat format;
  double bytes_per_point;
  int depth = 1;
  bool in_cache = false;  // a grid that stays in cache: the core's own ceiling
  std::string twin = "";  // in_cache: the out-of-cache case it is the core rate of
  hympi::StoresChoice stores = hympi::StoresChoice::Auto;
};

// The table's rows, in the order each round runs them.
std::vector<Case> roofline_cases(int depth) {
  constexpr auto kCached = hympi::StoresChoice::Cached;
  constexpr auto kStencil = hympi::MatrixFormat::Stencil;
  const hympi::KernelInfo& jacobi = hympi::kernel_info(hympi::KernelKind::Jacobi);
  const hympi::KernelInfo& spmv = hympi::kernel_info(hympi::KernelKind::Spmv);
  const hympi::KernelInfo& rbgs = hympi::kernel_info(hympi::KernelKind::Rbgs);
  const std::string d = "-" + std::to_string(depth);
  return {
      {"jacobi", jacobi.kind, kStencil, jacobi.bytes_per_point},
      {"spmv-stencil", spmv.kind, kStencil, spmv.bytes_per_point},
      {"jacobi-cached", jacobi.kind, kStencil, jacobi.bytes_per_point, 1, false, "", kCached},
      {"stencil-cached", spmv.kind, kStencil, spmv.bytes_per_point, 1, false, "", kCached},
      {"spmv-crs", spmv.kind, hympi::MatrixFormat::Crs, spmv.bytes_per_point_crs},
      {"spmv-sell", spmv.kind, hympi::MatrixFormat::Sell, spmv.bytes_per_point_sell},
      {"jacobi-depth" + d, jacobi.kind, kStencil, jacobi.bytes_per_point, depth},
      {"spmv-depth" + d, spmv.kind, kStencil, spmv.bytes_per_point, depth},
      {"jacobi-in-cache", jacobi.kind, kStencil, jacobi.bytes_per_point, 1, true, "jacobi-cached"},
      {"stencil-in-cache", spmv.kind, kStencil, spmv.bytes_per_point, 1, true, "stencil-cached"},
      {"crs-in-cache", spmv.kind, hympi::MatrixFormat::Crs, spmv.bytes_per_point_crs, 1, true, "spmv-crs"},
      {"sell-in-cache", spmv.kind, hympi::MatrixFormat::Sell, spmv.bytes_per_point_sell, 1, true,
       "spmv-sell"},
      {"rbgs", rbgs.kind, kStencil, rbgs.bytes_per_point},
      {"rbgs-depth" + d, rbgs.kind, kStencil, rbgs.bytes_per_point, depth},
      {"rbgs-in-cache", rbgs.kind, kStencil, rbgs.bytes_per_point, 1, true, "rbgs"},
  };
}

std::size_t index_of(const std::vector<Case>& cases, const std::string& name) {
  for (std::size_t c = 0; c < cases.size(); ++c)
    if (cases[c].name == name) return c;
  std::fprintf(stderr, "hympi_roofline: no case %s\n", name.c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
  return 0;
}

// What the rounds measured: per round, the copies' bytes per second and
// each case's LUP/s; per case how it stored and its tile height.
struct Measured {
  std::vector<double> copy_bw, copy_nt_bw;
  std::vector<std::vector<double>> lups;
  std::vector<hympi::Stores> used;
  std::vector<int> tile_rows;  // blocked cases: rows per wavefront tile
};

// Aggregate bytes per second of `iters` copies on every rank at once.
double time_copies(bool streaming, const double* a, double* b, long elems, int iters, int ranks) {
  const auto copy = streaming ? copy_loop_streaming : copy_loop;
  copy(a, b, elems);  // warm
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = omp_get_wtime();
  for (int rep = 0; rep < iters; ++rep) copy(a, b, elems);
  const double mine = omp_get_wtime() - t0;
  double t = 0;
  MPI_Allreduce(&mine, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return kCopyBytesPerElement * elems * ranks * iters / t;
}

// One case's solve; its MLUP/s over all ranks.
double run_case(const Case& c, const Options& o, int ranks, hympi::SolveResult& res) {
  hympi::SolveConfig cfg;
  cfg.kernel = c.kernel;
  cfg.format = c.format;
  cfg.grid = {o.n, o.n, o.n};
  cfg.iters = o.iters;
  // 256 x 16 x 16 points per thread (16 planes each), as many updates as
  // the big grid. With 16 planes per rank, 2 threads shared them 8 and 8 and
  // ran below the blocked sweep (1676 against 2226 MLUP/s, 1 rank x 2
  // threads, 2-core VM): a barrier per sweep for little work.
  if (c.in_cache) {
    cfg.grid = {256, 16, 16 * o.threads};
    cfg.iters = std::max(1, static_cast<int>(std::min(
                                100000.0, 1.0 * o.iters * o.n * o.n * o.n /
                                              (256.0 * 16 * 16 * o.threads * ranks))));
  }
  cfg.threads = o.threads;
  cfg.halo_depth = c.depth;
  // The in-cache cases measure the core's own ceiling: their 1 MiB per rank
  // fits a last-level cache but not every L2 (512 KiB on some AMD VMs), where
  // --stores auto would stream them to memory. They always store cached.
  cfg.stores = c.in_cache ? hympi::StoresChoice::Cached : c.stores;
  if (!c.in_cache) {
    res = hympi::solve(MPI_COMM_WORLD, cfg);
    return res.mlups;
  }
  // The in-cache cases: every rank its own grid (MPI_COMM_SELF), all at
  // once, their rates summed. One grid over the ranks exchanged a face of
  // 256 x 16 points per iteration and rank, 1/16 of the points computed: at
  // 2 ranks the pair ran at about one core's rate, no ceiling for the model
  // (bench/README.md).
  MPI_Barrier(MPI_COMM_WORLD);
  res = hympi::solve(MPI_COMM_SELF, cfg);
  double sum = 0;
  MPI_Allreduce(&res.mlups, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return sum;
}

Measured run_rounds(const std::vector<Case>& cases, const Options& o, int ranks) {
  // The temporally blocked cases first run untimed, long enough for the
  // library to try both wavefront tile heights (2 blocks each) and keep the
  // faster, as in any solve of more than a few blocks: the rounds time the
  // kept one.
  for (const Case& c : cases) {
    if (c.depth <= 1) continue;
    hympi::SolveConfig cfg;
    cfg.kernel = c.kernel;
    cfg.grid = {o.n, o.n, o.n};
    cfg.iters = 4 * c.depth;
    cfg.threads = o.threads;
    cfg.halo_depth = c.depth;
    hympi::solve(MPI_COMM_WORLD, cfg);
  }
  const long elems = static_cast<long>(o.n + 2) * (o.n + 2) * (o.n + 2) / ranks / 8 * 8;
  const auto a = aligned_array(elems, 1.0), b = aligned_array(elems, 0.0);
  Measured m;
  m.lups.resize(cases.size());
  m.used.assign(cases.size(), hympi::Stores::Cached);
  m.tile_rows.assign(cases.size(), 0);
  for (int r = 0; r < o.rounds; ++r) {
    m.copy_bw.push_back(time_copies(false, a.get(), b.get(), elems, o.iters, ranks));
    if (hympi::streaming_stores_available())
      m.copy_nt_bw.push_back(time_copies(true, a.get(), b.get(), elems, o.iters, ranks));
    for (std::size_t c = 0; c < cases.size(); ++c) {
      hympi::SolveResult res;
      m.lups[c].push_back(run_case(cases[c], o, ranks, res) * 1e6);
      m.used[c] = res.stores;
      m.tile_rows[c] = res.tile_rows;
    }
  }
  return m;
}

void print_table(const std::vector<Case>& cases, const Measured& m, const Options& o, int ranks) {
  const double bw = median(m.copy_bw);
  const double bw_nt = m.copy_nt_bw.empty() ? 0.0 : median(m.copy_nt_bw);
  std::printf("# hympi roofline: %d^3 grid, %d iterations, %d rounds (medians), %d thread(s), "
              "%d rank(s); *-depth: --halo-depth %d (ratio > 1: above the one-sweep roofline)\n",
              o.n, o.iters, o.rounds, o.threads, ranks, o.depth);
  std::printf("# ratio: to stream-copy (ordinary stores, which also read each line they write:\n"
              "# 24 B of traffic per 16 B counted); of-nt-copy: to the copy with streaming stores\n"
              "# (16 B), the fair reference for a kernel run with stores streaming\n");
  std::printf("# %-14s %12s %10s %14s %8s %10s %10s\n", "kernel", "MLUP/s", "B/point", "GB/s (bytes)",
              "ratio", "of-nt-copy", "stores");
  const auto of_nt = [&](double bytes_per_s) {
    char text[32];
    if (bw_nt > 0)
      std::snprintf(text, sizeof text, "%.3f", bytes_per_s / bw_nt);
    else
      std::snprintf(text, sizeof text, "-");
    return std::string(text);
  };
  std::printf("  %-14s %12s %10.0f %14.2f %8s %10s %10s\n", "stream-copy", "-", kCopyBytesPerElement,
              bw / 1e9, "1.000", of_nt(bw).c_str(), "cached");
  if (bw_nt > 0)
    std::printf("  %-14s %12s %10.0f %14.2f %8.3f %10s %10s\n", "stream-copy-nt", "-",
                kCopyBytesPerElement, bw_nt / 1e9, bw_nt / bw, "1.000", "streaming");
  for (std::size_t c = 0; c < cases.size(); ++c) {
    const double l = median(m.lups[c]);
    const double eff = l * cases[c].bytes_per_point;
    std::printf("  %-14s %12.1f %10.0f %14.2f %8.3f %10s %10s\n", cases[c].name.c_str(), l / 1e6,
                cases[c].bytes_per_point, eff / 1e9, eff / bw, of_nt(eff).c_str(),
                hympi::stores_name(m.used[c]));
  }
}

void print_model(const std::vector<Case>& cases, const Measured& m, int depth) {
  const double bw = median(m.copy_bw);
  const double bw_nt = m.copy_nt_bw.empty() ? 0.0 : median(m.copy_nt_bw);
  const auto rate = [&](const std::string& name) { return median(m.lups[index_of(cases, name)]); };
  std::printf("# traffic model: 1 / (1 / in-cache rate + bytes per point / copy bandwidth), no\n"
              "# overlap of core and memory time; overlapped: min(in-cache, memory-only), all of it\n"
              "# (streaming rows: memory-only at the streaming copy's rate)\n");
  std::printf("# %-14s %12s %12s %12s %12s %10s\n", "kernel", "in-cache", "memory-only", "model",
              "overlapped", "measured/model");
  const auto model_row = [&](const std::string& name, double core, double roof, double measured) {
    const double model = 1.0 / (1.0 / core + 1.0 / roof);
    std::printf("  %-14s %12.1f %12.1f %12.1f %12.1f %10.3f\n", name.c_str(), core / 1e6, roof / 1e6,
                model / 1e6, std::min(core, roof) / 1e6, measured / model);
  };
  for (const Case& c : cases) {
    if (!c.in_cache) continue;
    const Case& o = cases[index_of(cases, c.twin)];
    model_row(o.name, rate(c.name), bw / o.bytes_per_point, rate(o.name));
  }
  // jacobi and spmv-stencil as run (streaming where --stores auto streams),
  // against the streaming copy; their in-cache twins are the same loops.
  const char* const streaming_twins[][2] = {{"jacobi", "jacobi-in-cache"},
                                            {"spmv-stencil", "stencil-in-cache"}};
  for (const auto& t : streaming_twins)
    if (bw_nt > 0 && m.used[index_of(cases, t[0])] == hympi::Stores::Streaming)
      model_row(t[0], rate(t[1]), bw_nt / cases[index_of(cases, t[0])].bytes_per_point, rate(t[0]));
  // The blocked jacobi and spmv: a block of H sweeps reads field a and
  // write-allocates field b once, and writes both back once (4 x 8 B per
  // point over H updates; H >= 2), and each sweep after the first re-reads
  // the 2 rows of its input (radius 1) that the tile before it wrote: per
  // update 32 / H + 16 (H - 1) / (H T) bytes with tiles of T rows, all of it
  // real traffic, so at the ordinary copy's real rate (24 B per 16 B counted).
  const std::string d = "-" + std::to_string(depth);
  const std::string blocked_twins[][2] = {{"jacobi-depth" + d, "jacobi-in-cache"},
                                          {"spmv-depth" + d, "stencil-in-cache"}};
  for (const auto& t : blocked_twins) {
    const int rows = m.tile_rows[index_of(cases, t[0])];
    if (rows <= 0 || depth < 2) continue;
    const double bytes = 32.0 / depth + 16.0 * (depth - 1) / (1.0 * depth * rows);
    std::printf("# %s: tiles of %d rows, %.2f B of memory traffic per update\n", t[0].c_str(), rows,
                bytes);
    model_row(t[0], rate(t[1]), bw * kCopyTrafficPerCounted / bytes, rate(t[0]));
  }
}

void print_rounds(const std::vector<Case>& cases, const Measured& m, int depth) {
  std::printf("# copy GB/s per round:");
  for (double x : m.copy_bw) std::printf(" %.2f", x / 1e9);
  if (!m.copy_nt_bw.empty()) {
    std::printf("\n# copy-nt GB/s per round:");
    for (double x : m.copy_nt_bw) std::printf(" %.2f", x / 1e9);
  }
  std::printf("\n# jacobi MLUP/s per round:");
  for (double x : m.lups[index_of(cases, "jacobi")]) std::printf(" %.1f", x / 1e6);
  std::printf("\n");
  // Temporal blocking against the same kernel at depth 1, round by round
  // (the rounds interleave them).
  const std::string d = "-" + std::to_string(depth);
  const std::string blocked_pairs[][2] = {{"jacobi-depth" + d, "jacobi"},
                                          {"spmv-depth" + d, "spmv-stencil"},
                                          {"rbgs-depth" + d, "rbgs"}};
  for (const auto& pair : blocked_pairs) {
    const auto& blocked = m.lups[index_of(cases, pair[0])];
    const auto& plain = m.lups[index_of(cases, pair[1])];
    std::vector<double> ratios;
    for (std::size_t r = 0; r < blocked.size(); ++r) ratios.push_back(blocked[r] / plain[r]);
    std::printf("# %s over %s, per round: median %.2fx, range %.2f-%.2f\n", pair[0].c_str(),
                pair[1].c_str(), median(ratios), *std::min_element(ratios.begin(), ratios.end()),
                *std::max_element(ratios.begin(), ratios.end()));
  }
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  Options o;
  const int status = parse_options(argc, argv, rank, o);
  if (status >= 0) {
    MPI_Finalize();
    return status;
  }
  omp_set_num_threads(o.threads);
  const std::vector<Case> cases = roofline_cases(o.depth);
  const Measured m = run_rounds(cases, o, ranks);
  if (rank != 0) {
    MPI_Finalize();
    return 0;
  }
  print_table(cases, m, o, ranks);
  print_model(cases, m, o.depth);
  print_rounds(cases, m, o.depth);
  // A table that could not be written (a full disk, a closed pipe) is a
  // failure, not a silent success.
  const bool written = std::fflush(stdout) == 0 && !std::ferror(stdout);
  if (!written) std::fprintf(stderr, "hympi_roofline: could not write the table: %s\n", std::strerror(errno));
  MPI_Finalize();
  return written ? 0 : 1;
}
