// Benchmark, not a test: what a box stencil's halo costs against a star's.
// Three exchanges of one field on the same grid (periodic, so every rank has
// all 26 neighbours), scheme masteronly, empty update (only the exchange is
// timed), in interleaved rounds:
//   star   DomainConfig::stencil = Star: the 6 faces;
//   box    stencil = Box: faces, 12 edges and 8 corners, 26 messages at once
//          (what hympi does, under every scheme);
//   axes   the alternative hympi does not use: x, then y, then z, each
//          phase's faces widened over the halos the earlier phases filled
//          (6 messages in 3 dependent phases; cannot overlap by face).
// Each exchange is timed alone, after a barrier, the three cases taking
// turns, so that a rank descheduled on a loaded machine spoils single
// samples, not a whole case: a round's figure is the slowest rank's median
// exchange. Prints the medians (and min, max) over rounds, and box/star and
// axes/box per round. Checks first that axes leaves the same halo as box,
// point for point.
//   mpirun -n 2 hympi_box_stencil [--grid N (64)] [--halo H (1)]
//                                 [--iters T (200)] [--rounds R (7)]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "hympi/hympi.hpp"

using namespace hympi;

namespace {

struct Spread {
  double median, min, max;
};

Spread spread(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return {n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]), v.front(), v.back()};
}

int arg_int(int argc, char** argv, const char* name, int fallback) {
  for (int a = 1; a + 1 < argc; ++a)
    if (std::string(argv[a]) == name) {
      char* end = nullptr;
      const long v = std::strtol(argv[a + 1], &end, 10);
      if (*end != '\0' || v < 1 || v > 100000) {
        std::fprintf(stderr, "hympi_box_stencil: %s needs an integer in 1 .. 100000\n", name);
        std::exit(2);
      }
      return static_cast<int>(v);
    }
  return fallback;
}

void check_mpi(int rc) {
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    std::fprintf(stderr, "hympi_box_stencil: MPI error: %s\n", text);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

// The axis-by-axis exchange: along x the faces over the own y and z extent,
// along y over x widened by the halo, along z over x and y widened. One
// MPI_Sendrecv per side and axis, packed with the plan's box packer.
class AxisExchange {
 public:
  AxisExchange(const LocalDomain& d, int halo, MPI_Comm comm) : d_(d), h_(halo), comm_(comm) {}
  void run(Field& f) {
    const FieldList fields{&f};
    for (int a = 0; a < 3; ++a)
      for (int side = 0; side < 2; ++side) {
        const int dir = 2 * a + side;
        Box send = d_.box(), recv = d_.box();
        for (int b = 0; b < a; ++b) {  // axes done: their halo travels too
          send.lo[b] = recv.lo[b] = -h_;
          send.hi[b] = recv.hi[b] = d_.size[b] + h_;
        }
        if (side == 0) {
          send.hi[a] = h_;
          recv.lo[a] = d_.size[a];
          recv.hi[a] = d_.size[a] + h_;
        } else {
          send.lo[a] = d_.size[a] - h_;
          recv.lo[a] = -h_;
          recv.hi[a] = 0;
        }
        // Send towards dir, receive from the opposite side into its halo.
        const int to = d_.neighbour[dir], from = d_.neighbour[opposite(dir)];
        out_.resize(static_cast<std::size_t>(send.points()));
        in_.resize(static_cast<std::size_t>(recv.points()));
        ExchangePlan::pack_box(send, fields, out_.data());
        check_mpi(MPI_Sendrecv(out_.data(), static_cast<int>(out_.size()), MPI_DOUBLE, to, dir,
                               in_.data(), static_cast<int>(in_.size()), MPI_DOUBLE, from, dir,
                               comm_, MPI_STATUS_IGNORE));
        if (from != MPI_PROC_NULL) ExchangePlan::unpack_box(recv, fields, in_.data());
      }
  }

 private:
  const LocalDomain& d_;
  int h_;
  MPI_Comm comm_;
  std::vector<double> out_, in_;
};

// A value for every own point (its global index), halos zeroed.
void fill(Domain& d, Field& f) {
  std::fill(f.data(), f.data() + f.count(), 0.0);
  const LocalDomain& l = d.local();
  for (int k = 0; k < l.size[2]; ++k)
    for (int j = 0; j < l.size[1]; ++j)
      for (int i = 0; i < l.size[0]; ++i)
        f.at(i, j, k) = (l.offset[0] + i) + 1000.0 * (l.offset[1] + j) + 1e6 * (l.offset[2] + k);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = arg_int(argc, argv, "--grid", 64);
  const int halo = arg_int(argc, argv, "--halo", 1);
  const int iters = arg_int(argc, argv, "--iters", 200);
  const int rounds = arg_int(argc, argv, "--rounds", 7);
  int status = 0;
  try {
    DomainConfig c;
    c.grid = {n, n, n};
    c.halo = halo;
    c.periodic = {true, true, true};
    Domain star(MPI_COMM_WORLD, c);
    c.stencil = Stencil::Box;
    Domain box(MPI_COMM_WORLD, c);
    Field fs = star.make_field(), fb = box.make_field(), fa = box.make_field();
    AxisExchange axes(box.local(), halo, box.comm());
    fill(box, fb);
    fill(box, fa);
    box.sweep({&fb}, [](const Box&, int) {});
    axes.run(fa);
    long long differ = 0;
    for (std::size_t p = 0; p < fb.count(); ++p) differ += fb.data()[p] != fa.data()[p];
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &differ, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    if (differ != 0) {
      if (rank == 0) std::fprintf(stderr, "hympi_box_stencil: axes and box halos differ at %lld points\n", differ);
      status = 1;
    } else {
      std::vector<double> t_star, t_box, t_axes;
      auto timed = [&](auto&& exchange, std::vector<double>& samples) {
        check_mpi(MPI_Barrier(MPI_COMM_WORLD));
        const double t0 = MPI_Wtime();
        exchange();
        samples.push_back(MPI_Wtime() - t0);
      };
      // The slowest rank's median of one round's samples.
      auto round_figure = [&](std::vector<double>& samples, std::vector<double>& out) {
        double m = spread(samples).median;
        check_mpi(MPI_Allreduce(MPI_IN_PLACE, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
        out.push_back(m);
        samples.clear();
      };
      std::vector<double> s_star, s_box, s_axes;
      for (int r = 0; r < rounds; ++r) {
        for (int it = 0; it < iters; ++it) {
          timed([&] { star.sweep({&fs}, [](const Box&, int) {}); }, s_star);
          timed([&] { box.sweep({&fb}, [](const Box&, int) {}); }, s_box);
          timed([&] { axes.run(fa); }, s_axes);
        }
        round_figure(s_star, t_star);
        round_figure(s_box, t_box);
        round_figure(s_axes, t_axes);
      }
      if (rank == 0) {
        const Spread s = spread(t_star), b = spread(t_box), a = spread(t_axes);
        std::vector<double> box_over_star, axes_over_box;
        for (int r = 0; r < rounds; ++r) {
          box_over_star.push_back(t_box[r] / t_star[r]);
          axes_over_box.push_back(t_axes[r] / t_box[r]);
        }
        const Spread bs = spread(box_over_star), ab = spread(axes_over_box);
        std::printf("# %d ranks, grid %d^3 periodic, halo %d, %d exchanges x %d rounds (us per "
                    "exchange, a round's median; over rounds: median, min, max)\n",
                    size, n, halo, iters, rounds);
        std::printf("# %-6s %10s %10s %10s\n", "case", "median", "min", "max");
        for (const auto& [name, st] : {std::pair{"star", s}, std::pair{"box", b}, std::pair{"axes", a}})
          std::printf("  %-6s %10.2f %10.2f %10.2f\n", name, 1e6 * st.median, 1e6 * st.min, 1e6 * st.max);
        std::printf("box/star  %.2f [%.2f, %.2f] (per round)\n", bs.median, bs.min, bs.max);
        std::printf("axes/box  %.2f [%.2f, %.2f] (per round)\n", ab.median, ab.min, ab.max);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hympi_box_stencil: rank %d: %s\n", rank, e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}
