// STREAM copy on every rank at once, for bench/peers.py: b[i] = a[i] over
// arrays of --elements doubles in all (split evenly over the ranks), ordinary
// stores, 16 B counted per element. Each repetition runs between barriers
// and takes the maximum time over ranks; rank 0 prints one JSON object with
// the aggregate rate of every repetition.
//   mpirun -n R hympi_stream_copy --elements N [--repeat R]
#include <mpi.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "hympi/field.hpp"

namespace {

// GCC would turn the loop into memcpy, whose non-temporal stores skip the
// write-allocate traffic that every kernel's store pays (as in roofline.cpp).
__attribute__((noinline, optimize("no-tree-loop-distribute-patterns"))) void copy_loop(
    const double* __restrict a, double* __restrict b, long n) {
#pragma omp simd
  for (long i = 0; i < n; ++i) b[i] = a[i];
}

bool parse_long(const char* text, long& out) {
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (*text == '\0' || errno != 0 || *end != '\0' || v < 1) return false;
  out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long elements = 0, repeat = 5;
  for (int i = 1; i < argc; i += 2) {
    long* dst = std::strcmp(argv[i], "--elements") == 0 ? &elements
                : std::strcmp(argv[i], "--repeat") == 0 ? &repeat
                                                        : nullptr;
    if (!dst || i + 1 >= argc || !parse_long(argv[i + 1], *dst)) {
      if (rank == 0) std::fprintf(stderr, "hympi_stream_copy: usage: --elements N [--repeat R]\n");
      MPI_Finalize();
      return 2;
    }
  }
  if (elements == 0) {
    if (rank == 0) std::fprintf(stderr, "hympi_stream_copy: --elements is required\n");
    MPI_Finalize();
    return 2;
  }
  const long n = elements / size;
  // On huge pages where the system gives them, as every hympi Field asks.
  std::unique_ptr<double[]> a(new double[n]), b(new double[n]);
  hympi::advise_huge_pages(a.get(), n * sizeof(double));
  hympi::advise_huge_pages(b.get(), n * sizeof(double));
  for (long i = 0; i < n; ++i) a[i] = 1.0, b[i] = 0.0;
  copy_loop(a.get(), b.get(), n);  // warm-up
  std::vector<double> rates;
  for (long r = 0; r < repeat; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    copy_loop(a.get(), b.get(), n);
    const double t = MPI_Wtime() - t0;
    double tmax = 0;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    rates.push_back(16.0 * n * size / tmax);
  }
  if (rank == 0) {
    std::printf("{\"work\": \"stream-copy\", \"ranks\": %d, \"elements\": %ld, \"bytes_per_s\": [", size,
                n * size);
    for (std::size_t i = 0; i < rates.size(); ++i) std::printf("%s%.6g", i ? ", " : "", rates[i]);
    std::printf("]}\n");
  }
  MPI_Finalize();
  return 0;
}
