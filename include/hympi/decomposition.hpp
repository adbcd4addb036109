// The decomposition of the global grid over the process grid: which points
// each rank owns, and its neighbour across each face.
#pragma once

#include <mpi.h>

#include <array>

#include "hympi/box.hpp"
#include "hympi/topology.hpp"

namespace hympi {

// Directions: 0 = -x, 1 = +x, 2 = -y, 3 = +y, 4 = -z, 5 = +z.
constexpr int kDirections = 6;
inline int dir_axis(int dir) { return dir / 2; }
inline int dir_side(int dir) { return dir % 2; }  // 0 = low side, 1 = high side
inline int opposite(int dir) { return dir ^ 1; }

// The local part of the global grid owned by this rank.
struct LocalDomain {
  std::array<int, 3> global{0, 0, 0};
  std::array<int, 3> offset{0, 0, 0};  // global index of local point (0,0,0)
  std::array<int, 3> size{0, 0, 0};
  std::array<bool, 3> periodic{false, false, false};
  std::array<int, kDirections> neighbour{};  // rank, or MPI_PROC_NULL
  // The rank across every face, edge and corner, at offset (dx, dy, dz) in
  // {-1, 0, 1}^3: around[offset_index(o)] (MPI_PROC_NULL where the grid
  // ends; [13], offset 0, is this rank). Deep halos of temporal blocking
  // and box stencils read edges and corners; a star stencil's halo of one
  // sweep reads the faces only.
  std::array<int, 27> around = no_neighbours();
  Box box() const { return Box{{0, 0, 0}, size}; }
  bool has_neighbour(int dir) const { return neighbour[dir] != MPI_PROC_NULL; }
  // The physical boundaries, in direction order (-x, +x, -y, +y, -z, +z): the
  // faces on the global grid's edge along a non-periodic axis, which are
  // exactly the faces without a neighbour (a periodic axis has none, even
  // with one rank along it). hympi never writes the halo beyond them
  // (docs/user-kernels.md, "Boundary values").
  std::array<bool, kDirections> physical_boundaries() const {
    std::array<bool, kDirections> physical{};
    for (int dir = 0; dir < kDirections; ++dir) physical[dir] = !has_neighbour(dir);
    return physical;
  }
  static std::array<int, 27> no_neighbours() {
    std::array<int, 27> a{};
    a.fill(MPI_PROC_NULL);
    return a;
  }
};

// Index of offset o in {-1, 0, 1}^3 in LocalDomain::around.
inline int offset_index(const std::array<int, 3>& o) {
  return (o[0] + 1) + 3 * (o[1] + 1) + 9 * (o[2] + 1);
}

// Collective-free: uneven split of the global grid over the process grid.
LocalDomain decompose(const std::array<int, 3>& global, const std::array<bool, 3>& periodic,
                      const ProcessGrid& grid);

// The own box moved by `layers` on every side that has a neighbour:
// outwards into the halo when positive (the region a deep-halo sweep
// computes), inwards when negative, never past empty.
Box grown_box(const LocalDomain& d, int layers);

// The interior: points whose stencil needs no halo value that arrives by
// message (the box shrunk by `halo` on every side that has a neighbour).
Box interior_box(const LocalDomain& d, int halo = 1);

}  // namespace hympi
