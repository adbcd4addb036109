// A user program that uses only the public API of libhympi: run Jacobi on a
// 32^3 grid under every registered scheme it can run with the threads it
// has, and check that all agree. Build against an installed hympi with
//   find_package(hympi REQUIRED)  target_link_libraries(app hympi::hympi)
#include <mpi.h>

#include <cmath>
#include <cstdio>

#include "hympi/hympi.hpp"

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 0;
  try {
    hympi::SolveConfig cfg;
    cfg.kernel = hympi::KernelKind::Jacobi;
    cfg.grid = {32, 32, 32};
    cfg.iters = 20;
    cfg.threads = 2;
    double first_l2 = -1;
    for (const auto& scheme : hympi::scheme_registry()) {
      cfg.scheme = &scheme;
      if (provided < scheme.info.thread_level) continue;
      if (!hympi::validate_config(cfg, size, nullptr, 0).empty()) continue;
      const hympi::SolveResult r = hympi::solve(MPI_COMM_WORLD, cfg);
      if (first_l2 < 0) first_l2 = r.l2;
      const bool same = std::fabs(r.l2 - first_l2) <= 1e-12 * first_l2;
      if (!same) status = 1;
      if (rank == 0)
        std::printf("%-20s l2 = %.17g  time %.4f s  %s\n", scheme.info.name.c_str(), r.l2,
                    r.time_s.median, same ? "agrees" : "DIFFERS");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}
