// Benchmark, not a test: what one message per face carrying K fields saves
// against K exchanges of one field each. The same Domain (scheme masteronly,
// every rank's update empty, so only the exchange is timed) runs, in
// interleaved rounds: one sweep of K fields, then K sweeps of one field.
// Prints the medians over rounds of the time per exchange of all K fields,
// and the ratio together/separate (< 1: packing them together is cheaper).
//   mpirun -n 2 hympi_multi_field [--grid N (64)] [--fields K (3)]
//                                 [--iters T (200)] [--rounds R (7)]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "hympi/hympi.hpp"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int arg_int(int argc, char** argv, const char* name, int fallback) {
  for (int a = 1; a + 1 < argc; ++a)
    if (std::string(argv[a]) == name) {
      const int v = std::atoi(argv[a + 1]);
      if (v < 1) {
        std::fprintf(stderr, "hympi_multi_field: %s needs a positive integer\n", name);
        std::exit(2);
      }
      return v;
    }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = arg_int(argc, argv, "--grid", 64);
  const int k = arg_int(argc, argv, "--fields", 3);
  const int iters = arg_int(argc, argv, "--iters", 200);
  const int rounds = arg_int(argc, argv, "--rounds", 7);
  {
    hympi::DomainConfig c;
    c.grid = {n, n, n};
    c.periodic = {true, true, true};  // every rank exchanges all six faces
    hympi::Domain d(MPI_COMM_WORLD, c);
    std::vector<hympi::Field> fields;
    for (int f = 0; f < k; ++f) fields.push_back(d.make_field());
    std::vector<hympi::Field*> all;
    for (auto& f : fields) all.push_back(&f);
    const hympi::BoxFn nothing = [](const hympi::Box&, int) {};
    std::vector<double> together, separate;
    for (int r = 0; r < rounds; ++r) {
      d.start_clock();
      for (int it = 0; it < iters; ++it) d.sweep(all, nothing);
      d.stop_clock();
      double t = d.elapsed(), tmax = 0;
      MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      together.push_back(tmax / iters);
      d.start_clock();
      for (int it = 0; it < iters; ++it)
        for (auto* f : all) d.sweep({f}, nothing);
      d.stop_clock();
      t = d.elapsed();
      MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      separate.push_back(tmax / iters);
    }
    if (rank == 0) {
      const auto face = 1.0 * n * n * 8 / 1024;  // KiB of one face of one field (whole grid)
      std::printf("# %d ranks, grid %d^3 periodic, %d fields, %d exchanges per round, %d rounds\n",
                  size, n, k, iters, rounds);
      std::printf("# face of the whole grid: %.1f KiB per field\n", face);
      std::printf("together (1 sweep of %d fields)   %10.2f us\n", k, median(together) * 1e6);
      std::printf("separate (%d sweeps of 1 field)   %10.2f us\n", k, median(separate) * 1e6);
      std::printf("ratio together/separate          %10.3f\n", median(together) / median(separate));
    }
  }
  MPI_Finalize();
  return 0;
}
