// The built-in kernels as the public API names them: their list and facts
// (KernelInfo), the reference problem, the stored matrix forms (CRS, SELL)
// and the store modes. Their box loops, which know boxes and arrays and
// never MPI, are private to the library (src/kernels/box_kernels.hpp, each
// in its kernel's file); a scheme decides which boxes to compute, and when.
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
  X(Cg, cg)                  \
  X(Pipecg, pipecg)

#define HYMPI_KERNEL_ENUMERATOR(kind, name) kind,
enum class KernelKind { HYMPI_KERNEL_LIST(HYMPI_KERNEL_ENUMERATOR) };
#undef HYMPI_KERNEL_ENUMERATOR
// How the 7-point operator is applied: matrix-free (stencil), or from a
// stored matrix in CRS (the plain reference) or SELL-C-sigma (the fast one).
enum class MatrixFormat { Stencil, Crs, Sell };
// "stencil", "crs", "sell": the names the CLI and the JSON use.
const char* format_name(MatrixFormat f);

// Bytes per point of the CRS matrix (struct CrsMatrix below): seven values
// and seven 32-bit column indices, plus one 64-bit row pointer per row.
constexpr double kCrsMatrixBytesPerPoint =
    7 * (sizeof(double) + sizeof(std::int32_t)) + sizeof(std::int64_t);
// Rows per SELL chunk: one AVX-512 vector of doubles, one 64-byte line of
// values per chunk and slot.
constexpr int kSellChunk = 8;
// Bytes per point of the SELL matrix (struct SellMatrix below) as built for
// the 7-point operator: seven values per row; per chunk of kSellChunk rows,
// one 32-bit column per slot, two 64-bit pointers and a one-byte slot mask
// (every slot is consecutive: no 16-bit offsets).
constexpr double kSellMatrixBytesPerPoint =
    7 * sizeof(double) +
    (7 * sizeof(std::int32_t) + 2 * sizeof(std::int64_t) + 1) / static_cast<double>(kSellChunk);

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
  double bytes_per_point_crs = 0;  // per iteration, CRS format (0: no stored form)
  double bytes_per_point_sell = 0; // per iteration, SELL format (0: no stored form)
  int fields = 1;                  // arrays of doubles held over the whole grid (at
                                   // halo_depth 1; temporal blocking holds 2 at least)
  bool converges = false;          // runs until tol / max_iters, not a fixed iters
  // Runs several sweeps per exchange (SolveConfig::halo_depth > 1: that
  // many of its sweeps_per_iteration sweeps, e.g. rbgs's colours) in the
  // stencil format: a two-field sweep whose points are computed the same way
  // in the halo as in the box (Domain::sweep_block), giving the field of
  // halo depth 1 to the last bit.
  bool temporal_blocking = false;
  // Its one-sweep loop (halo_depth 1, stencil format) writes a second array
  // it does not read, and can write it with streaming stores
  // (SolveConfig::stores).
  bool streaming_stores = false;
  // Planes per step of its temporally blocked wavefront
  // (DomainConfig::wavefront_planes): 2 where its box loop computes two
  // planes in one pass (jacobi, spmv, rbgs: its blocked sweeps are
  // jacobi's), 1 elsewhere.
  int wavefront_planes = 1;
  PeriodicRule periodic = PeriodicRule::Allowed;
  std::string periodic_why;        // why the periodic rule (for its message)
  // In the study's kernel set when --kernels is not given (hympi-lab
  // study); false for a variant whose runs would only make the default
  // study longer (pipecg), with the reason.
  bool default_study = true;
  std::string default_study_why;

  bool supports(MatrixFormat f) const {
    if (f == MatrixFormat::Crs) return bytes_per_point_crs > 0;
    if (f == MatrixFormat::Sell) return bytes_per_point_sell > 0;
    return true;
  }
  // Minimum traffic per point and iteration in format f.
  double bytes_per_point_in(MatrixFormat f) const {
    if (f == MatrixFormat::Crs) return bytes_per_point_crs;
    if (f == MatrixFormat::Sell) return bytes_per_point_sell;
    return bytes_per_point;
  }
  // Memory this kernel holds per grid point in format f: its fields, plus
  // the stored matrix.
  double memory_bytes_per_point(MatrixFormat f) const {
    const double matrix = f == MatrixFormat::Crs    ? kCrsMatrixBytesPerPoint
                          : f == MatrixFormat::Sell ? kSellMatrixBytesPerPoint
                                                    : 0.0;
    return sizeof(double) * fields + matrix;
  }
};
const std::vector<KernelInfo>& kernel_registry();
const KernelInfo* find_kernel(const std::string& name);
const KernelInfo& kernel_info(KernelKind kind);

// The reference problem (docs/reference-problem.md): initial field and right-hand side.
inline double initial_value(long long i, long long j, long long k) {
  return static_cast<double>((7 * i + 13 * j + 29 * k) % 17) / 16.0 - 0.5;
}
constexpr double kRhs = 1.0;
constexpr double kSpmvScale = 1.0 / 12.0;  // x <- (A x) / 12

// How a sweep writes its output array. Cached: ordinary stores; a store to
// a line that is not in cache first reads that line (write-allocate), so an
// output streamed to memory costs 8 bytes read + 8 written per point.
// Streaming: non-temporal stores for the whole aligned vectors of each row
// (x86: MOVNTPD), which send the line to memory without reading it, and
// leave it out of the cache: faster where the array would not have stayed
// in cache anyway, much slower where it would have (bench/README.md). The
// values written are the same to the last bit either way.
enum class Stores { Cached, Streaming };
// "cached", "streaming".
const char* stores_name(Stores s);
// Whether Stores::Streaming streams in this build (x86 with SSE2 or wider);
// elsewhere it stores as Cached does.
bool streaming_stores_available();

// The 7-point operator stored as a CRS matrix over the local points (row =
// local point, i fastest); columns index the haloed array of a Field of the
// same size, so halo values are read in place. Couplings across a Dirichlet
// boundary are not stored.
struct CrsMatrix {
  std::array<int, 3> size{0, 0, 0};
  HugePageVector<std::int64_t> row_ptr;
  HugePageVector<std::int32_t> col;  // local boxes stay far below 2^31 points
  HugePageVector<double> val;
  std::int64_t row(int i, int j, int k) const {
    return i + static_cast<std::int64_t>(size[0]) * (j + static_cast<std::int64_t>(size[1]) * k);
  }
};
// has_neighbour_side[dir]: the point beyond that local face exists (another
// rank's point or a periodic image); otherwise the coupling is dropped.
CrsMatrix build_crs(const Field& layout, const std::array<bool, 6>& has_neighbour_side);
// The same operator in SELL-C-sigma (Kreutzer et al. 2014) with C =
// kSellChunk and sigma = 1 (the rows of this matrix are of near-equal length:
// no sorting). Each i-line of the local box is cut into chunks of C
// consecutive rows (the last one padded), so that any box a scheme computes
// is a set of whole or partial chunks. Within a chunk the entries are stored
// slot-major: entry (slot s, row r) at chunk_ptr[c] + s * C + r, so one
// slot of a chunk is C consecutive values, one SIMD vector. Column indices
// are compressed per chunk slot (the index half of Kourtis et al.'s CSR-DU
// idea; the values stay full doubles): a 32-bit base per slot, and
//   * a consecutive slot (row r reads column base + r, the common case on a
//     structured grid, whatever the coefficients) stores nothing more: its
//     x values are one contiguous vector load;
//   * any other slot (bit s of the chunk's mask) stores C 16-bit offsets
//     from the base, read as a gather.
// The slots keep CRS's order (diagonal, -i, +i, -j, +j, -k, +k): a coupling
// dropped at a Dirichlet face is stored as an explicit 0 that reads the
// (zero) halo point, so every row sums its terms in the order CRS does.
struct SellMatrix {
  std::array<int, 3> size{0, 0, 0};
  int chunks_per_line = 0;              // ceil(size[0] / kSellChunk)
  HugePageVector<std::int64_t> chunk_ptr;  // first entry of chunk c; width = (ptr[c+1]-ptr[c]) / C
  HugePageVector<std::int32_t> base;       // [chunk_ptr[c] / C + slot]: column of the slot's row 0
  HugePageVector<std::uint8_t> mask;       // [c]: bit s set = slot s stores 16-bit offsets
  HugePageVector<std::int64_t> off_ptr;    // [c]: the chunk's first offset in off
  HugePageVector<std::uint16_t> off;       // per masked slot, C offsets: column = base + off
  HugePageVector<double> val;
  std::int64_t chunk(int ic, int j, int k) const {
    return ic + static_cast<std::int64_t>(chunks_per_line) *
                    (j + static_cast<std::int64_t>(size[1]) * k);
  }
};
// compress_columns = false stores every slot's 16-bit offsets (plain SELL
// with 16-bit column offsets; the tests compare both forms).
SellMatrix build_sell(const Field& layout, const std::array<bool, 6>& has_neighbour_side,
                      bool compress_columns = true);
// The operator A in whichever form is stored: CRS or SELL when one is given,
// matrix-free otherwise.
struct StoredMatrix {
  const CrsMatrix* crs = nullptr;
  const SellMatrix* sell = nullptr;
};
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
