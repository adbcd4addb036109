// validate_domain: every problem with a DomainConfig at once, no MPI.
#include <algorithm>
#include <string>
#include <vector>

#include "domain_impl.hpp"

namespace hympi {

using detail::dims_text;

namespace {

// "'a' does" or "'a', 'b' do": the schemes that take reserved threads.
std::string schemes_taking_reserved() {
  std::string names;
  int count = 0;
  for (const auto& e : scheme_registry())
    if (e.info.takes_reserved) names += (count++ ? ", '" : "'") + e.info.name + "'";
  if (count == 0) return "none does";
  return names + (count == 1 ? " does" : " do");
}

// The thread rules the scheme declares in its SchemeInfo.
void check_threads(const DomainConfig& c, std::vector<std::string>& errors) {
  if (c.threads < 1 || c.threads > 1024)
    errors.push_back("`threads` " + std::to_string(c.threads) + " is out of range: accepted 1 .. 1024");
  if (!c.scheme) {
    errors.push_back("no scheme given (one of: " + scheme_names() + ")");
    return;
  }
  const SchemeInfo& s = c.scheme->info;
  if (!s.unavailable.empty()) errors.push_back("scheme '" + s.name + "' is " + s.unavailable);
  if (c.threads < 1) return;
  if (c.threads < s.min_threads)
    errors.push_back("scheme '" + s.name + "' needs at least " + std::to_string(s.min_threads) +
                     " threads (one communicates, the others compute); got threads = " +
                     std::to_string(c.threads));
  if (c.reserved != 0 && !s.takes_reserved)
    errors.push_back("scheme '" + s.name + "' takes no `reserved` (only " +
                     schemes_taking_reserved() + ")");
  if (s.takes_reserved && c.reserved != 0 && (c.reserved < 1 || c.reserved >= c.threads))
    errors.push_back("`reserved` must satisfy 1 <= m < threads (got m = " +
                     std::to_string(c.reserved) + ", threads = " + std::to_string(c.threads) + ")");
}

// The process grid fits the grid, and every rank's box is at least one halo
// thick along each axis where it has a neighbour (a halo comes from one
// neighbour only).
void check_decomposition(const DomainConfig& c, int ranks, const NodeMap* real_nodes,
                         std::vector<std::string>& errors) {
  int nodes = 1, rpn = ranks;
  if (c.ranks_per_node > 0) {
    rpn = c.ranks_per_node;
    nodes = ranks / rpn;
  } else if (real_nodes && real_nodes->homogeneous()) {
    nodes = real_nodes->node_count;
    rpn = real_nodes->ranks_per_node.front();
  }
  const GridChoice g = choose_grid(c.grid, nodes, rpn, c.periodic, c.proc_grid);
  const char axis[3] = {'x', 'y', 'z'};
  for (int d = 0; d < 3; ++d) {
    if (g.dims[d] > c.grid[d]) {
      errors.push_back("`grid` has " + std::to_string(c.grid[d]) + " points along " + axis[d] +
                       " but the process grid " + dims_text(g.dims) + " has " +
                       std::to_string(g.dims[d]) + " processes there (each needs >= 1 point)");
      continue;
    }
    const int thinnest = c.grid[d] / g.dims[d];
    const int width = c.halo * c.halo_depth;
    const std::string what =
        c.halo_depth == 1 ? "`halo` " + std::to_string(c.halo)
        : c.halo == 1     ? "`halo_depth` " + std::to_string(c.halo_depth)
                      : "`halo` " + std::to_string(c.halo) + " x `halo_depth` " + std::to_string(c.halo_depth) +
                            " (halo layers " + std::to_string(width) + ")";
    if ((g.dims[d] > 1 || c.periodic[d]) && thinnest < width)
      errors.push_back(what + " needs at least " + std::to_string(width) +
                       " points per rank along " + axis[d] + ", but " +
                       std::to_string(c.grid[d]) + " points over " + std::to_string(g.dims[d]) +
                       " processes give " + std::to_string(thinnest));
  }
}

}  // namespace

std::vector<std::string> validate_domain(const DomainConfig& c, int ranks,
                                         const NodeMap* real_nodes) {
  std::vector<std::string> errors;
  const bool grid_ok = c.grid[0] >= 1 && c.grid[1] >= 1 && c.grid[2] >= 1;
  if (!grid_ok) errors.push_back("`grid` dimensions must be positive integers");
  if (c.halo < 1 || c.halo > 64)
    errors.push_back("`halo` " + std::to_string(c.halo) + " is out of range: accepted 1 .. 64");
  if (c.halo_depth < 1 || c.halo_depth > 64)
    errors.push_back("`halo_depth` " + std::to_string(c.halo_depth) + " is out of range: accepted 1 .. 64");
  if (c.wavefront_planes < 1 || c.wavefront_planes > 4)
    errors.push_back("`wavefront_planes` " + std::to_string(c.wavefront_planes) +
                     " is out of range: accepted 1 .. 4");
  if (c.stencil != Stencil::Star && c.stencil != Stencil::Box)
    errors.push_back("`stencil` " + std::to_string(static_cast<int>(c.stencil)) +
                     " is unknown: accepted 0 (star) or 1 (box)");
  check_threads(c, errors);
  bool rpn_ok = true;
  if (c.ranks_per_node < 0 || (c.ranks_per_node > 0 && ranks % c.ranks_per_node != 0)) {
    errors.push_back("`ranks_per_node` " + std::to_string(c.ranks_per_node) +
                     " does not divide the " + std::to_string(ranks) + " ranks");
    rpn_ok = false;
  }
  if (rpn_ok && c.scheme && c.scheme->info.needs_node_peers) {
    // The largest node: the virtual ones, else the real ones (one node of
    // every rank when they are not known).
    int largest = c.ranks_per_node > 0 ? c.ranks_per_node : ranks;
    if (c.ranks_per_node == 0 && real_nodes && !real_nodes->ranks_per_node.empty())
      largest = *std::max_element(real_nodes->ranks_per_node.begin(),
                                  real_nodes->ranks_per_node.end());
    if (largest < 2)
      errors.push_back("scheme '" + c.scheme->info.name +
                       "' shares memory between the ranks of a node, but every node holds one "
                       "rank (run at least 2 ranks per node)");
  }
  // All zero: chosen. A partly zero or negative grid (C and Fortran pass
  // any three integers) would otherwise be ignored or mis-sized.
  const bool chosen = c.proc_grid[0] == 0 && c.proc_grid[1] == 0 && c.proc_grid[2] == 0;
  const bool positive = c.proc_grid[0] >= 1 && c.proc_grid[1] >= 1 && c.proc_grid[2] >= 1;
  // Dimensions up to 2^20 multiply without overflow; a larger one is more
  // processes than any rank count.
  const int largest = 1 << 20;
  const bool small = c.proc_grid[0] <= largest && c.proc_grid[1] <= largest && c.proc_grid[2] <= largest;
  const long long fixed = small ? 1LL * c.proc_grid[0] * c.proc_grid[1] * c.proc_grid[2] : 0;
  if (!chosen && !positive)
    errors.push_back("`proc_grid` " + dims_text(c.proc_grid) +
                     " must have every dimension >= 1 (or all 0: chosen node-aware)");
  else if (positive && !small)
    errors.push_back("`proc_grid` " + dims_text(c.proc_grid) + " has more processes than the " +
                     std::to_string(ranks) + " ranks");
  else if (positive && fixed != ranks)
    errors.push_back("`proc_grid` " + dims_text(c.proc_grid) + " has " + std::to_string(fixed) +
                     " processes, but there are " + std::to_string(ranks) + " ranks");
  else if (grid_ok && rpn_ok && c.halo >= 1 && c.halo <= 64 && c.halo_depth >= 1 && c.halo_depth <= 64)
    check_decomposition(c, ranks, real_nodes, errors);
  return errors;
}

}  // namespace hympi
