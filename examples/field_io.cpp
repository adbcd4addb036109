// Field I/O in a user's program (hympi/field_io.hpp, docs/field-io.md):
// every rank fills its box of a smooth field (two Gaussian blobs on a
// wave), the field is written with MPI-IO as FILE (raw float64, i fastest)
// with FILE.json and FILE.xmf beside it, read back into a second field and
// gathered to rank 0, and both are compared with the values computed here:
//
//   mpirun -n 3 ./field_io --grid 64x48x32 --out field.raw
//   hympi-lab slice field.raw --axis z -o slice.png
//
// Prints one line; exit 0 when the file read back bit for bit, 1 when not,
// 2 for bad arguments, 4 when the file could not be written.
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hympi/hympi.hpp"

namespace {

const char* kUsage = "usage: field_io [--grid N | --grid NXxNYxNZ] [--out FILE] [--name NAME]\n";

double smooth(const std::array<int, 3>& n, int i, int j, int k) {
  const double x = (i + 0.5) / n[0], y = (j + 0.5) / n[1], z = (k + 0.5) / n[2];
  const auto blob = [&](double cx, double cy, double cz, double w) {
    const double r2 = (x - cx) * (x - cx) + (y - cy) * (y - cy) + (z - cz) * (z - cz);
    return std::exp(-r2 / (w * w));
  };
  return blob(0.3, 0.35, 0.5, 0.18) + 0.7 * blob(0.7, 0.65, 0.45, 0.12) +
         0.1 * std::sin(6.283185307179586 * (x + 2 * y)) * std::cos(3.141592653589793 * z);
}

// --grid N or NXxNYxNZ: "" or the problem (every rank parses the same argv).
std::string parse_grid(const char* text, std::array<int, 3>& grid) {
  int a = 0, b = 0, c = 0;
  char tail = 0;
  if (std::sscanf(text, "%dx%dx%d%c", &a, &b, &c, &tail) == 3)
    grid = {a, b, c};
  else if (std::sscanf(text, "%d%c", &a, &tail) == 1)
    grid = {a, a, a};
  else
    return std::string("bad value for --grid: ") + text;
  for (int n : grid)
    if (n < 1 || n > 4096) return std::string("--grid ") + text + " is out of range: accepted 1 .. 4096 per axis";
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::array<int, 3> grid{64, 48, 32};
  std::string out = "field.raw", name = "blobs", problem;
  for (int a = 1; a < argc && problem.empty(); ++a) {
    const std::string arg = argv[a];
    if (arg == "--help" || arg == "-h") {
      if (rank == 0) std::fputs(kUsage, stdout);
      MPI_Finalize();
      return 0;
    }
    if (a + 1 >= argc) {
      problem = arg + " needs a value";
    } else if (arg == "--grid") {
      problem = parse_grid(argv[++a], grid);
    } else if (arg == "--out") {
      out = argv[++a];
    } else if (arg == "--name") {
      name = argv[++a];
    } else {
      problem = "unknown option " + arg;
    }
  }
  int code = 0;
  try {
    if (!problem.empty()) throw hympi::UsageError(problem);
    hympi::DomainConfig config;
    config.grid = grid;
    hympi::Domain domain(MPI_COMM_WORLD, config);
    const hympi::LocalDomain& local = domain.local();
    hympi::Field u = domain.make_field();
    for (int k = 0; k < local.size[2]; ++k)
      for (int j = 0; j < local.size[1]; ++j)
        for (int i = 0; i < local.size[0]; ++i)
          u.at(i, j, k) = smooth(grid, local.offset[0] + i, local.offset[1] + j, local.offset[2] + k);
    hympi::write_field(domain, u, out, name);

    // Read back on this decomposition, and gather the result to rank 0.
    hympi::Field v = domain.make_field();
    hympi::read_field(domain, v, out);
    std::vector<double> global(rank == 0 ? 1ull * grid[0] * grid[1] * grid[2] : 0);
    hympi::gather_field(domain, v, global.data(), 0);
    long long wrong = 0;
    if (rank == 0)
      for (int k = 0; k < grid[2]; ++k)
        for (int j = 0; j < grid[1]; ++j)
          for (int i = 0; i < grid[0]; ++i)
            wrong += global[i + grid[0] * (j + grid[1] * static_cast<std::size_t>(k))] != smooth(grid, i, j, k);
    MPI_Bcast(&wrong, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    const auto& p = domain.grid().dims;
    if (rank == 0)
      std::printf("wrote %s (%dx%dx%d, %d ranks as %dx%dx%d): %s\n", out.c_str(), grid[0], grid[1], grid[2],
                  size, p[0], p[1], p[2], wrong ? "read back WRONG" : "read back bit for bit");
    code = wrong ? 1 : 0;
  } catch (const hympi::UsageError& e) {
    if (rank == 0) std::fprintf(stderr, "field_io: error: %s\n%s", e.what(), kUsage);
    code = 2;
  } catch (const hympi::OutputError& e) {
    if (rank == 0) std::fprintf(stderr, "field_io: error: %s\n", e.what());
    code = 4;
  } catch (const std::exception& e) {  // an MPI error: the same code on every rank that gets here
    std::fprintf(stderr, "field_io: error on rank %d: %s\n", rank, e.what());
    code = 1;
  }
  MPI_Finalize();
  return code;
}
