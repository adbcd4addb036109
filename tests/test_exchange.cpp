// Halo exchange at any rank count: after an exchange every received halo cell
// holds its global neighbour's value (periodic wrap) and Dirichlet halos stay
// 0; the plan's byte count equals the face arithmetic. Covers the three ways
// schemes drive a plan: whole begin/end, per-message steps from several
// threads at once (MPI_THREAD_MULTIPLE), and faces split in pieces. A plan
// with corners (temporal blocking) and a halo 2 deep fills the whole halo
// shell, edges and corners too.
#include <mpi.h>
#include <omp.h>

#include <cstdio>

#include "hympi/hympi.hpp"

using namespace hympi;

namespace {

double code(const std::array<int, 3>& g, long long i, long long j, long long k) {
  return 1.0 + static_cast<double>(i + g[0] * (j + g[1] * k));
}

// Expected value of a halo cell at local (i, j, k), or 0 outside a Dirichlet grid.
double expected(const LocalDomain& d, int i, int j, int k) {
  long long c[3] = {d.offset[0] + i, d.offset[1] + j, d.offset[2] + k};
  for (int a = 0; a < 3; ++a) {
    if (c[a] >= 0 && c[a] < d.global[a]) continue;
    if (!d.periodic[a]) return 0.0;
    c[a] = (c[a] + d.global[a]) % d.global[a];
  }
  return code(d.global, c[0], c[1], c[2]);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int passed = 0, failed = 0;
  const NodeMap nodes = discover_nodes(MPI_COMM_WORLD, 0, RankOrder::Sequential);
  const std::array<int, 3> grids[] = {{7, 6, 5}, {8, 9, 10}};
  for (const auto& g : grids)
    for (bool periodic : {false, true})
      for (int path = 0; path < 6; ++path) {
        const bool deep = path >= 3;  // halo 2 with edges and corners
        const int halo = deep ? 2 : 1;
        const std::array<bool, 3> per{periodic, periodic, periodic};
        GridChoice choice = choose_grid(g, nodes.node_count, nodes.ranks_per_node.front(), per, {0, 0, 0});
        ProcessGrid grid = make_process_grid(MPI_COMM_WORLD, nodes, choice);
        LocalDomain d = decompose(g, per, grid);
        const int pieces = path % 3 == 2 ? 3 : 1;
        bool fits = true;  // every extent with a neighbour holds the halo
        for (int dir = 0; dir < kDirections; ++dir)
          fits = fits && (!d.has_neighbour(dir) || d.size[dir_axis(dir)] >= halo);
        int all_fit = 0;
        const int my_fit = fits ? 1 : 0;
        MPI_Allreduce(&my_fit, &all_fit, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (!all_fit) continue;
        ExchangePlan plan(MPI_COMM_WORLD, d, nodes, pieces, halo, deep);
        Field f(d.size, halo);
        for (int k = 0; k < d.size[2]; ++k)
          for (int j = 0; j < d.size[1]; ++j)
            for (int i = 0; i < d.size[0]; ++i)
              f.at(i, j, k) = code(g, d.offset[0] + i, d.offset[1] + j, d.offset[2] + k);
        if (path % 3 == 0) {
          plan.begin({&f});
          plan.end({&f});
        } else {
          auto& msgs = plan.messages();
          const int n = static_cast<int>(msgs.size());
#pragma omp parallel num_threads(3)
          {
            const int t = omp_get_thread_num(), nt = omp_get_num_threads();
            for (int m = t; m < n; m += nt) plan.post_recv(msgs[m]);
            for (int m = t; m < n; m += nt) {
              ExchangePlan::pack(msgs[m], f);
              plan.send(msgs[m]);
            }
            for (int m = t; m < n; m += nt) {
              plan.wait_recv(msgs[m]);
              ExchangePlan::unpack(msgs[m], f);
              plan.wait_send(msgs[m]);
            }
          }
        }
        // Depth 1: the six face halos (not edges/corners: the 7-point
        // stencil never reads them). Deep: the whole shell, and the bytes of
        // every face, edge and corner with a neighbour.
        long long bad = 0, face_bytes = 0;
        if (deep) {
          for (int k = -halo; k < d.size[2] + halo; ++k)
            for (int j = -halo; j < d.size[1] + halo; ++j)
              for (int i = -halo; i < d.size[0] + halo; ++i) {
                const bool inside = i >= 0 && i < d.size[0] && j >= 0 && j < d.size[1] && k >= 0 &&
                                    k < d.size[2];
                if (!inside && f.at(i, j, k) != expected(d, i, j, k)) ++bad;
              }
          for (int dir = 0; dir < kAllDirections; ++dir) {
            const std::array<int, 3> o = direction_offset(dir);
            if (d.around[offset_index(o)] == MPI_PROC_NULL) continue;
            long long points = 1;
            for (int a = 0; a < 3; ++a) points *= o[a] == 0 ? d.size[a] : halo;
            face_bytes += 8 * points;
          }
        }
        for (int dir = 0; dir < kDirections && !deep; ++dir) {
          const int a = dir_axis(dir);
          Box h = d.box();
          h.lo[a] = dir_side(dir) == 0 ? -1 : d.size[a];
          h.hi[a] = h.lo[a] + 1;
          if (d.has_neighbour(dir)) face_bytes += 8 * h.points();
          for (int k = h.lo[2]; k < h.hi[2]; ++k)
            for (int j = h.lo[1]; j < h.hi[1]; ++j)
              for (int i = h.lo[0]; i < h.hi[0]; ++i)
                if (f.at(i, j, k) != expected(d, i, j, k)) ++bad;
        }
        if (face_bytes != plan.bytes_intra() + plan.bytes_inter()) ++bad;
        long long bad_all = 0;
        MPI_Allreduce(&bad, &bad_all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (bad_all == 0) {
          ++passed;
        } else {
          ++failed;
          if (rank == 0)
            std::printf("FAIL grid %dx%dx%d %s path %d: %lld wrong halo cells or byte counts\n", g[0],
                        g[1], g[2], periodic ? "periodic" : "dirichlet", path, bad_all);
        }
      }
  if (rank == 0) std::printf("test_exchange: %d ranks\n%d passed, %d failed\n", size, passed, failed);
  MPI_Finalize();
  return failed == 0 ? 0 : 1;
}
