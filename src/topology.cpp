#include "hympi/topology.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "hympi/error.hpp"

namespace hympi {

bool NodeMap::homogeneous() const {
  return std::all_of(ranks_per_node.begin(), ranks_per_node.end(),
                     [&](int r) { return r == ranks_per_node.front(); });
}

namespace {

std::vector<std::string> gather_hosts(MPI_Comm comm) {
  int size = 0;
  HYMPI_CHECK_MPI(MPI_Comm_size(comm, &size));
  char name[MPI_MAX_PROCESSOR_NAME] = {0};
  int len = 0;
  HYMPI_CHECK_MPI(MPI_Get_processor_name(name, &len));
  std::vector<char> all(static_cast<std::size_t>(size) * MPI_MAX_PROCESSOR_NAME);
  HYMPI_CHECK_MPI(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(),
                                MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm));
  std::vector<std::string> hosts(size);
  for (int r = 0; r < size; ++r) hosts[r] = std::string(&all[r * MPI_MAX_PROCESSOR_NAME]);
  return hosts;
}

}  // namespace

NodeMap discover_nodes(MPI_Comm comm, int ranks_per_node, RankOrder order) {
  int size = 0, rank = 0;
  HYMPI_CHECK_MPI(MPI_Comm_size(comm, &size));
  HYMPI_CHECK_MPI(MPI_Comm_rank(comm, &rank));
  const std::vector<std::string> hosts = gather_hosts(comm);

  NodeMap map;
  map.node_of_rank.assign(size, 0);
  std::vector<int> index_in_node(size, 0);
  if (ranks_per_node > 0) {
    map.virtual_nodes = true;
    map.node_count = size / ranks_per_node;
    for (int r = 0; r < size; ++r) {
      if (order == RankOrder::Sequential) {
        map.node_of_rank[r] = r / ranks_per_node;
        index_in_node[r] = r % ranks_per_node;
      } else {
        map.node_of_rank[r] = r % map.node_count;
        index_in_node[r] = r / map.node_count;
      }
    }
  } else {
    // Real nodes: ranks that can share memory. Each node is named by its
    // lowest rank, and nodes are numbered in the order of those ranks.
    MPI_Comm shared = MPI_COMM_NULL;
    HYMPI_CHECK_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared));
    int leader = rank;
    int local_rank = 0;
    int rc = MPI_Allreduce(&rank, &leader, 1, MPI_INT, MPI_MIN, shared);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(shared, &local_rank);
    MPI_Comm_free(&shared);
    HYMPI_CHECK_MPI(rc);
    std::vector<int> leaders(size), locals(size);
    HYMPI_CHECK_MPI(MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, comm));
    HYMPI_CHECK_MPI(MPI_Allgather(&local_rank, 1, MPI_INT, locals.data(), 1, MPI_INT, comm));
    std::map<int, int> id_of_leader;
    for (int r = 0; r < size; ++r) id_of_leader.emplace(leaders[r], 0);
    int id = 0;
    for (auto& kv : id_of_leader) kv.second = id++;
    map.node_count = id;
    for (int r = 0; r < size; ++r) {
      map.node_of_rank[r] = id_of_leader[leaders[r]];
      index_in_node[r] = locals[r];
    }
  }
  map.ranks_per_node.assign(map.node_count, 0);
  map.host_of_node.assign(map.node_count, "");
  for (int r = 0; r < size; ++r) {
    int n = map.node_of_rank[r];
    if (map.ranks_per_node[n]++ == 0) map.host_of_node[n] = hosts[r];
  }
  map.node_id = map.node_of_rank[rank];
  map.rank_in_node = index_in_node[rank];
  return map;
}

long long face_points(const std::array<int, 3>& global, const std::array<int, 3>& dims,
                      const std::array<bool, 3>& periodic) {
  long long total = 0;
  for (int d = 0; d < 3; ++d) {
    long long cuts = periodic[d] ? (dims[d] > 1 ? dims[d] : 0) : dims[d] - 1;
    long long plane = 1LL * global[(d + 1) % 3] * global[(d + 2) % 3];
    total += cuts * plane;
  }
  return total;
}

namespace {

std::vector<std::array<int, 3>> factor_triples(int n) {
  std::vector<std::array<int, 3>> out;
  for (int a = 1; a <= n; ++a) {
    if (n % a) continue;
    for (int b = 1; b <= n / a; ++b) {
      if ((n / a) % b) continue;
      out.push_back({a, b, n / a / b});
    }
  }
  return out;
}

}  // namespace

GridChoice choose_grid(const std::array<int, 3>& global, int nodes, int ranks_per_node,
                       const std::array<bool, 3>& periodic,
                       const std::array<int, 3>& fixed_dims) {
  const bool fixed = fixed_dims[0] > 0;
  // Cost, compared in tuple order: axes where some rank gets no point (a
  // feasible grid first), points on inter-node faces, points on all faces,
  // then more cuts along k, then along j (contiguous faces are cheaper to
  // pack).
  using Cost = std::tuple<int, long long, long long, int, int>;
  bool found = false;
  Cost best{};
  GridChoice choice;
  for (const auto& block : factor_triples(ranks_per_node)) {
    for (const auto& node_grid : factor_triples(nodes)) {
      std::array<int, 3> dims{block[0] * node_grid[0], block[1] * node_grid[1],
                              block[2] * node_grid[2]};
      if (fixed && dims != fixed_dims) continue;
      int infeasible = 0;
      for (int d = 0; d < 3; ++d) infeasible += dims[d] > global[d];
      Cost cost{infeasible, face_points(global, node_grid, periodic),
                face_points(global, dims, periodic), -dims[2], -dims[1]};
      if (!found || cost < best) {
        found = true;
        best = cost;
        choice.dims = dims;
        choice.node_block = block;
        choice.node_aware = true;
      }
    }
  }
  if (!found) {
    // Only possible with fixed dims that no node block divides.
    choice.dims = fixed_dims;
    choice.node_block = {1, 1, 1};
    choice.node_aware = false;
  }
  return choice;
}

std::array<int, 3> grid_coords(const GridChoice& grid, int rank, int node_id, int rank_in_node) {
  auto unravel = [](int idx, const std::array<int, 3>& dims) {
    return std::array<int, 3>{idx % dims[0], (idx / dims[0]) % dims[1], idx / (dims[0] * dims[1])};
  };
  if (!grid.node_aware) return unravel(rank, grid.dims);
  std::array<int, 3> node_dims{grid.dims[0] / grid.node_block[0], grid.dims[1] / grid.node_block[1],
                               grid.dims[2] / grid.node_block[2]};
  auto nc = unravel(node_id, node_dims);
  auto lc = unravel(rank_in_node, grid.node_block);
  return {nc[0] * grid.node_block[0] + lc[0], nc[1] * grid.node_block[1] + lc[1],
          nc[2] * grid.node_block[2] + lc[2]};
}

ProcessGrid make_process_grid(MPI_Comm comm, const NodeMap& nodes, const GridChoice& choice) {
  int size = 0, rank = 0;
  HYMPI_CHECK_MPI(MPI_Comm_size(comm, &size));
  HYMPI_CHECK_MPI(MPI_Comm_rank(comm, &rank));
  ProcessGrid g;
  g.choice = choice;
  g.coords = grid_coords(choice, rank, nodes.node_id, nodes.rank_in_node);
  std::vector<int> all(3 * static_cast<std::size_t>(size));
  HYMPI_CHECK_MPI(MPI_Allgather(g.coords.data(), 3, MPI_INT, all.data(), 3, MPI_INT, comm));
  g.rank_at.assign(size, -1);
  for (int r = 0; r < size; ++r) {
    int idx = all[3 * r] + choice.dims[0] * (all[3 * r + 1] + choice.dims[1] * all[3 * r + 2]);
    if (idx < 0 || idx >= size || g.rank_at[idx] != -1)
      throw std::logic_error("process grid: two ranks mapped to one grid position");
    g.rank_at[idx] = r;
  }
  return g;
}

GridChoice choose_grid_for_nodes(const std::array<int, 3>& global, const NodeMap& nodes, int ranks,
                                 const std::array<bool, 3>& periodic,
                                 const std::array<int, 3>& fixed_dims) {
  if (nodes.homogeneous())
    return choose_grid(global, nodes.node_count, nodes.ranks_per_node.front(), periodic, fixed_dims);
  GridChoice g = choose_grid(global, 1, ranks, periodic, fixed_dims);
  g.node_block = {1, 1, 1};
  g.node_aware = false;
  return g;
}

}  // namespace hympi
