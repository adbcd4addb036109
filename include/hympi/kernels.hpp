// Kernels that compute a given box of the local grid. They know boxes and
// arrays, never MPI: a scheme decides which boxes to compute, and when.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "hympi/box.hpp"
#include "hympi/field.hpp"

namespace hympi {

// The kernels, in the order the CLI and `info` list them: one line per
// kernel, X(Enumerator, name), where src/kernels/<name>.cpp defines
// `const Kernel& <name>_kernel()`. This list is the kernel registry
// (src/kernels/registry.cpp expands it) and gives KernelKind, the public
// API's handle on a kernel; adding a kernel is its file plus one line here.
#define HYMPI_KERNEL_LIST(X) \
  X(Jacobi, jacobi)          \
  X(Rbgs, rbgs)              \
  X(Spmv, spmv)              \
  X(Cg, cg)

#define HYMPI_KERNEL_ENUMERATOR(kind, name) kind,
enum class KernelKind { HYMPI_KERNEL_LIST(HYMPI_KERNEL_ENUMERATOR) };
#undef HYMPI_KERNEL_ENUMERATOR
enum class MatrixFormat { Stencil, Crs };

// Bytes per point of the CRS matrix (struct CrsMatrix below): seven values
// and seven 32-bit column indices, plus one 64-bit row pointer per row.
constexpr double kCrsMatrixBytesPerPoint =
    7 * (sizeof(double) + sizeof(std::int32_t)) + sizeof(std::int64_t);

// What periodic boundaries do to a kernel's problem.
enum class PeriodicRule {
  Allowed,
  EvenSizes,  // allowed when NX, NY, NZ are even
  Forbidden,
};

// What a kernel is and costs, declared once in its file so that validation,
// the model and reports read it instead of re-deriving it. Bytes are the
// minimum memory traffic per grid point and iteration (no write-allocate,
// halo reuse assumed from cache).
struct KernelInfo {
  KernelKind kind;
  std::string name;
  std::string description;
  int sweeps_per_iteration = 1;    // halo exchanges per iteration
  double flops_per_point = 0;      // per iteration
  double bytes_per_point = 0;      // per iteration, stencil format
  double bytes_per_point_crs = 0;  // per iteration, CRS format (0: no CRS form)
  int fields = 1;                  // arrays of doubles held over the whole grid
  bool converges = false;          // runs until tol / max_iters, not a fixed iters
  PeriodicRule periodic = PeriodicRule::Allowed;
  std::string periodic_why;        // why the periodic rule (for its message)

  bool supports(MatrixFormat f) const {
    return f == MatrixFormat::Stencil || bytes_per_point_crs > 0;
  }
  // Memory this kernel holds per grid point in format f: its fields, plus
  // the matrix when stored as CRS.
  double memory_bytes_per_point(MatrixFormat f) const {
    return sizeof(double) * fields + (f == MatrixFormat::Crs ? kCrsMatrixBytesPerPoint : 0.0);
  }
};
const std::vector<KernelInfo>& kernel_registry();
const KernelInfo* find_kernel(const std::string& name);
const KernelInfo& kernel_info(KernelKind kind);

// The reference problem (SYSTEM.md): initial field and right-hand side.
inline double initial_value(long long i, long long j, long long k) {
  return static_cast<double>((7 * i + 13 * j + 29 * k) % 17) / 16.0 - 0.5;
}
constexpr double kRhs = 1.0;
constexpr double kSpmvScale = 1.0 / 12.0;  // x <- (A x) / 12

// u_new = (S(u) + f) / 6 on box.
void jacobi_box(const Field& u, Field& u_new, const Box& box);
// In-place update of the points of one colour ((gi+gj+gk) % 2 == colour,
// global indices) in box; offset = global index of local point (0,0,0).
void rbgs_box(Field& u, const Box& box, int colour, const std::array<int, 3>& offset);
// y = scale * (6 x - S(x)) on box; returns sum over box of x * y (CG's p.q).
double stencil_apply_box(const Field& x, Field& y, const Box& box, double scale);

// The 7-point operator stored as a CRS matrix over the local points (row =
// local point, i fastest); columns index the haloed array of a Field of the
// same size, so halo values are read in place. Couplings across a Dirichlet
// boundary are not stored.
struct CrsMatrix {
  std::array<int, 3> size{0, 0, 0};
  std::vector<std::int64_t> row_ptr;
  std::vector<std::int32_t> col;  // local boxes stay far below 2^31 points
  std::vector<double> val;
  std::int64_t row(int i, int j, int k) const {
    return i + static_cast<std::int64_t>(size[0]) * (j + static_cast<std::int64_t>(size[1]) * k);
  }
};
// has_neighbour_side[dir]: the point beyond that local face exists (another
// rank's point or a periodic image); otherwise the coupling is dropped.
CrsMatrix build_crs(const Field& layout, const std::array<bool, 6>& has_neighbour_side);
double crs_apply_box(const CrsMatrix& a, const Field& x, Field& y, const Box& box, double scale);
// The operator A in whichever form is stored: CRS when crs is given,
// matrix-free otherwise.
inline double operator_apply_box(const CrsMatrix* crs, const Field& x, Field& y, const Box& box,
                                 double scale) {
  return crs ? crs_apply_box(*crs, x, y, box, scale) : stencil_apply_box(x, y, box, scale);
}

// CG vector steps over a box; each returns its partial dot product.
double axpy_pair_box(Field& x, Field& r, const Field& p, const Field& q, double alpha,
                     const Box& box);  // x += a p; r -= a q; returns r.r
void xpay_box(Field& p, const Field& r, double beta, const Box& box);  // p = r + b p
double dot_box(const Field& a, const Field& b, const Box& box);

// ---- Serial references on the whole global grid: plain loops, frozen. ----
struct ReferenceProblem {
  std::array<int, 3> global{0, 0, 0};
  bool periodic = false;
  int iters = 0;       // fixed-iteration kernels
  double tol = 0;      // converging kernels (cg)
  int max_iters = 0;
};
struct ReferenceResult {
  std::vector<double> field;  // NX*NY*NZ values, i fastest
  int iterations = 0;         // cg: iterations done
  double residual = 0;        // cg: final relative residual
};
// The kernel's own reference, found through its registry entry.
ReferenceResult reference_solve(KernelKind kernel, const std::array<int, 3>& global,
                                bool periodic, int iters, double tol, int max_iters);

}  // namespace hympi
