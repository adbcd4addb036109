// Process grids and physical boundaries of a Domain (C++ API): a forced
// process grid is the one used (every rank's box is the uneven split's box
// of a distinct grid position), and Domain::physical_boundaries() marks
// exactly the faces on the global grid's edge along non-periodic axes,
// under slab, pencil and 2-D grids, every periodicity pattern tried, and
// the chosen grid. validate_domain refuses a process grid whose product is
// not the rank count, with a dimension above the points, or partly zero or
// negative. Runs at any rank count; prints one line per failure and
// "N passed, N failed".
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include "hympi/hympi.hpp"

using namespace hympi;

namespace {

int g_rank = 0, g_size = 1;

struct Tally {
  int passed = 0, failed = 0;
  void check(bool ok, const std::string& what) {
    int mine = ok ? 0 : 1, any = 0;  // a failure on any rank fails all
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any) {
      ++failed;
      if (!ok) std::printf("FAIL rank %d: %s\n", g_rank, what.c_str());
    } else {
      ++passed;
    }
  }
};

std::string text(const std::array<int, 3>& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

// This rank's position in a process grid of `dims`, found from its box: the
// index p along each axis whose uneven split gives the box (-1: none).
std::array<int, 3> position_of(const LocalDomain& l, const std::array<int, 3>& dims) {
  std::array<int, 3> at{-1, -1, -1};
  for (int a = 0; a < 3; ++a)
    for (int p = 0; p < dims[a]; ++p) {
      const Range r = split_range(l.global[a], dims[a], p);
      if (r.offset == l.offset[a] && r.size == l.size[a]) at[a] = p;
    }
  return at;
}

// The definition: a face on the grid's edge along a non-periodic axis.
std::array<bool, 6> expected_boundaries(const LocalDomain& l) {
  std::array<bool, 6> e{};
  for (int a = 0; a < 3; ++a) {
    e[2 * a] = !l.periodic[a] && l.offset[a] == 0;
    e[2 * a + 1] = !l.periodic[a] && l.offset[a] + l.size[a] == l.global[a];
  }
  return e;
}

void grid_case(Tally& tally, const std::array<int, 3>& dims, const std::array<bool, 3>& periodic) {
  DomainConfig c;
  c.grid = {12, 10, 9};
  c.periodic = periodic;
  c.proc_grid = dims;
  Domain d(MPI_COMM_WORLD, c);
  const std::string label = "proc_grid " + text(dims) + " periodic " + std::to_string(periodic[0]) +
                            std::to_string(periodic[1]) + std::to_string(periodic[2]);
  const bool forced = dims[0] > 0;
  const std::array<int, 3> used = d.grid().dims;
  if (forced) tally.check(used == dims, label + ": the grid used is " + text(used));
  const std::array<int, 3> at = position_of(d.local(), used);
  const bool placed = at[0] >= 0 && at[1] >= 0 && at[2] >= 0;
  tally.check(placed, label + ": the box is one of the grid's boxes");
  // Every position taken once: the boxes tile the grid.
  const int mine = placed ? at[0] + used[0] * (at[1] + used[1] * at[2]) : -1;
  std::vector<int> all(static_cast<std::size_t>(g_size));
  MPI_Allgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::sort(all.begin(), all.end());
  bool tiled = true;
  for (int r = 0; r < g_size; ++r) tiled = tiled && all[r] == r;
  tally.check(tiled, label + ": every grid position is one rank's");

  const std::array<bool, 6> got = d.physical_boundaries();
  tally.check(got == expected_boundaries(d.local()), label + ": physical_boundaries()");
  // And their number over all ranks: two faces per rank row along each
  // non-periodic axis.
  int faces = static_cast<int>(std::count(got.begin(), got.end(), true)), total = 0;
  MPI_Allreduce(&faces, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int want = 0;
  for (int a = 0; a < 3; ++a)
    if (!periodic[a]) want += 2 * g_size / used[a];
  tally.check(total == want, label + ": " + std::to_string(total) + " physical faces over the ranks, not " +
                                 std::to_string(want));
}

bool has_error(const std::vector<std::string>& errors, const std::string& part) {
  for (const auto& e : errors)
    if (e.find(part) != std::string::npos) return true;
  return false;
}

void bad_grids(Tally& tally) {
  DomainConfig c;
  c.grid = {12, 10, 9};
  c.proc_grid = {2, 2, 1};
  tally.check(has_error(validate_domain(c, 3), "`proc_grid` 2x2x1 has 4 processes, but there are 3 ranks"),
              "a product that is not the rank count");
  c.grid = {12, 1, 9};
  tally.check(has_error(validate_domain(c, 4),
                        "`grid` has 1 points along y but the process grid 2x2x1 has 2 processes there"),
              "a dimension above the points");
  c.grid = {12, 10, 9};
  c.proc_grid = {0, 2, 2};
  tally.check(has_error(validate_domain(c, 4), "`proc_grid` 0x2x2 must have every dimension >= 1"),
              "a partly zero grid");
  c.proc_grid = {-2, -2, 1};
  tally.check(has_error(validate_domain(c, 4), "`proc_grid` -2x-2x1 must have every dimension >= 1"),
              "a negative grid");
  c.proc_grid = {2000000000, 2000000000, 3};
  tally.check(has_error(validate_domain(c, 4), "`proc_grid` 2000000000x2000000000x3 has more processes than the 4 ranks"),
              "a grid whose product overflows");
  c.proc_grid = {2, 2, 1};
  tally.check(validate_domain(c, 4).empty(), "a valid grid passes");
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  Tally tally;
  try {
    std::vector<std::array<int, 3>> grids{{0, 0, 0}, {g_size, 1, 1}, {1, g_size, 1}, {1, 1, g_size}};
    if (g_size % 2 == 0) grids.push_back({2, g_size / 2, 1});
    const std::array<std::array<bool, 3>, 4> periodics{
        {{false, false, false}, {true, true, true}, {true, false, false}, {false, false, true}}};
    for (const auto& dims : grids)
      for (const auto& periodic : periodics) grid_case(tally, dims, periodic);
    bad_grids(tally);
  } catch (const std::exception& e) {
    std::printf("FAIL rank %d: exception: %s\n", g_rank, e.what());
    ++tally.failed;
  }
  int counts[2] = {tally.passed, tally.failed};
  if (g_rank == 0) std::printf("%d passed, %d failed\n", counts[0], counts[1]);
  MPI_Finalize();
  return counts[1] ? 1 : 0;
}
