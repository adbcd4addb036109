// Nodes and the node-aware 3-D process grid (the papers' "topology problem":
// the ranks of one node should form a compact block so that few grid faces
// cross node boundaries).
#pragma once

#include <mpi.h>

#include <array>
#include <string>
#include <vector>

namespace hympi {

enum class RankOrder { Sequential, RoundRobin };

struct NodeMap {
  bool virtual_nodes = false;      // true when made with ranks_per_node
  int node_count = 1;
  int node_id = 0;                 // this rank's node, 0 .. node_count-1
  int rank_in_node = 0;            // this rank's index within its node
  std::vector<int> node_of_rank;   // node id of every rank of the communicator
  std::vector<int> ranks_per_node; // size of every node
  std::vector<std::string> host_of_node;
  // All nodes hold the same number of ranks (needed for the node-aware grid).
  bool homogeneous() const;
};

// Collective over comm. With ranks_per_node == 0 the nodes are the real ones
// (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED); otherwise virtual nodes of
// ranks_per_node ranks: consecutive ranks (Sequential) or rank r on node
// r % nodes (RoundRobin). ranks_per_node must divide the communicator size.
NodeMap discover_nodes(MPI_Comm comm, int ranks_per_node, RankOrder order);

// The grid chosen for a run: dims of the whole process grid, and the block of
// the grid that one node holds (all ones when the mapping is not node-aware).
struct GridChoice {
  std::array<int, 3> dims{1, 1, 1};
  std::array<int, 3> node_block{1, 1, 1};
  bool node_aware = false;
};

// Choose the process grid for `nodes` nodes of `ranks_per_node` ranks each on
// a global grid of `global` points: the dims are a node block (a factoring of
// ranks_per_node) times a node grid (a factoring of nodes). Candidates are
// ranked, in this order, by: the number of axes along which some rank would
// get no point (fewest first, so a feasible grid wins whenever one exists);
// the points on inter-node faces (the node grid's cuts); the points on all
// faces; more cuts along k; more cuts along j. When `fixed_dims` is given
// (non-zero), only the node block is chosen; if no block of ranks_per_node
// ranks times a node grid gives fixed_dims, the mapping is plain rank order.
// Pure function (no MPI), so it is unit-tested directly.
GridChoice choose_grid(const std::array<int, 3>& global, int nodes, int ranks_per_node,
                       const std::array<bool, 3>& periodic,
                       const std::array<int, 3>& fixed_dims);

// The grid for the nodes found: choose_grid with their count and size when
// every node holds the same number of ranks; otherwise (nodes of different
// sizes) no node-aware block fits, and the grid is in plain rank order.
GridChoice choose_grid_for_nodes(const std::array<int, 3>& global, const NodeMap& nodes, int ranks,
                                 const std::array<bool, 3>& periodic,
                                 const std::array<int, 3>& fixed_dims);

// Grid coordinates of a rank. Node-aware: the node's block is placed by node
// id (x fastest), the rank inside it by its index in the node. Otherwise the
// rank's index in the communicator, x fastest.
std::array<int, 3> grid_coords(const GridChoice& grid, int rank, int node_id, int rank_in_node);

struct ProcessGrid {
  GridChoice choice;
  std::array<int, 3> coords{0, 0, 0};
  std::vector<int> rank_at;  // rank at linear grid index x + dx*(y + dy*z)
  int rank_of(std::array<int, 3> c) const {
    return rank_at[c[0] + choice.dims[0] * (c[1] + choice.dims[1] * c[2])];
  }
};

// Collective: every rank computes its coordinates, then all are gathered.
ProcessGrid make_process_grid(MPI_Comm comm, const NodeMap& nodes, const GridChoice& choice);

// Inter-node and total face points of a grid choice (for tests and reports).
long long face_points(const std::array<int, 3>& global, const std::array<int, 3>& dims,
                      const std::array<bool, 3>& periodic);

}  // namespace hympi
