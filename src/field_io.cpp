// gather_field and scatter_field (hympi/field_io.hpp), and the helpers the
// MPI-IO path shares (field_io_support.hpp).
//
// Both are one MPI_Alltoallw: every rank sends (or receives) its own points
// straight from (into) its halo'd array through a subarray datatype, and
// the root receives (sends) each rank's box straight into (from) its place
// in the global array through a subarray of the global grid. No packing
// copy on either side, no point-to-point tags on the domain's communicator.
#include "hympi/field_io.hpp"

#include <array>
#include <string>
#include <vector>

#include "field_io_support.hpp"

namespace hympi {
namespace detail {

void agree(MPI_Comm comm, Fault fault, const std::string& message) {
  int rank = 0, size = 1;
  HYMPI_CHECK_MPI(MPI_Comm_rank(comm, &rank));
  HYMPI_CHECK_MPI(MPI_Comm_size(comm, &size));
  const int mine = fault == Fault::None ? size : rank;
  int first = size;
  HYMPI_CHECK_MPI(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm));
  if (first == size) return;
  int kind = static_cast<int>(fault);
  HYMPI_CHECK_MPI(MPI_Bcast(&kind, 1, MPI_INT, first, comm));
  std::string text = message;
  int length = static_cast<int>(text.size());
  HYMPI_CHECK_MPI(MPI_Bcast(&length, 1, MPI_INT, first, comm));
  text.resize(static_cast<std::size_t>(length));
  if (length > 0) HYMPI_CHECK_MPI(MPI_Bcast(&text[0], length, MPI_CHAR, first, comm));
  if (kind == static_cast<int>(Fault::Output)) throw OutputError(text);
  throw UsageError(text);
}

std::string field_problem(const Domain& domain, const Field& field) {
  const LocalDomain& local = domain.local();
  const int layers = domain.layout().halo;
  if (!field.data()) return "the field is empty (no array)";
  if (field.size() != local.size || field.halo() != layers) {
    int rank = 0;
    MPI_Comm_rank(domain.comm(), &rank);
    const auto text = [](const std::array<int, 3>& n) {
      return std::to_string(n[0]) + "x" + std::to_string(n[1]) + "x" + std::to_string(n[2]);
    };
    return "the field on rank " + std::to_string(rank) + " is " + text(field.size()) +
           " with halo " + std::to_string(field.halo()) + ", the domain's fields are " +
           text(local.size) + " with halo " + std::to_string(layers) +
           " (a field of another domain?)";
  }
  return "";
}

std::string mpi_text(int code) {
  std::string text = mpi_error_text(code);
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

namespace {

bool empty_box(const std::array<int, 3>& size) {
  return size[0] <= 0 || size[1] <= 0 || size[2] <= 0;
}

// An empty box is no points at all (a subarray may not have a zero extent).
void make_empty_type(OwnedType& type) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  HYMPI_CHECK_MPI(MPI_Type_contiguous(0, MPI_DOUBLE, &t));
  type.reset(t);
}

}  // namespace

void make_memory_type(const Field& field, OwnedType& type) {
  const std::array<int, 3>& n = field.size();
  if (empty_box(n)) return make_empty_type(type);
  const int h = field.halo();
  const auto sj = static_cast<int>(field.stride_j());
  const auto rows = static_cast<int>(field.stride_k() / field.stride_j());
  // C order: slowest first. A row holds stride_j doubles (CacheLine pads it).
  const int sizes[3] = {n[2] + 2 * h, rows, sj};
  const int subsizes[3] = {n[2], n[1], n[0]};
  const int starts[3] = {h, h, h};
  MPI_Datatype t = MPI_DATATYPE_NULL;
  HYMPI_CHECK_MPI(MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &t));
  type.reset(t);
}

void make_global_type(const std::array<int, 3>& global, const std::array<int, 3>& offset,
                      const std::array<int, 3>& size, OwnedType& type) {
  if (empty_box(size)) return make_empty_type(type);
  const int sizes[3] = {global[2], global[1], global[0]};
  const int subsizes[3] = {size[2], size[1], size[0]};
  const int starts[3] = {offset[2], offset[1], offset[0]};
  MPI_Datatype t = MPI_DATATYPE_NULL;
  HYMPI_CHECK_MPI(MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &t));
  type.reset(t);
}

}  // namespace detail

namespace {

// One field's transfer between the ranks' boxes and the root's global array:
// the argument checks (agreed), then the datatypes of MPI_Alltoallw.
class Transfer {
 public:
  Transfer(Domain& domain, const Field& field, const void* global, int root, const char* call)
      : comm_(domain.comm()), root_(root) {
    HYMPI_CHECK_MPI(MPI_Comm_rank(comm_, &rank_));
    HYMPI_CHECK_MPI(MPI_Comm_size(comm_, &size_));
    std::string problem = detail::field_problem(domain, field);
    if (problem.empty() && (root < 0 || root >= size_))
      problem = "root " + std::to_string(root) + " is out of range: accepted 0 .. " +
                std::to_string(size_ - 1);
    else if (problem.empty() && rank_ == root && !global)
      problem = "the global array on the root (rank " + std::to_string(root) + ") is null";
    detail::agree(comm_, problem.empty() ? detail::Fault::None : detail::Fault::Usage,
                  problem.empty() ? "" : std::string(call) + ": " + problem);
    detail::make_memory_type(field, memory_);
    // The root builds one subarray per rank from the boxes gathered here.
    const LocalDomain& local = domain.local();
    const int mine[6] = {local.offset[0], local.offset[1], local.offset[2],
                         local.size[0],   local.size[1],   local.size[2]};
    std::vector<int> boxes(rank_ == root ? 6 * static_cast<std::size_t>(size_) : 6);
    HYMPI_CHECK_MPI(MPI_Gather(mine, 6, MPI_INT, boxes.data(), 6, MPI_INT, root, comm_));
    if (rank_ == root) {
      global_.resize(static_cast<std::size_t>(size_));
      for (int r = 0; r < size_; ++r) {
        const int* b = &boxes[6 * static_cast<std::size_t>(r)];
        detail::make_global_type(local.global, {b[0], b[1], b[2]}, {b[3], b[4], b[5]}, global_[r]);
      }
    }
  }

  // Collective: `from` to `to`, every rank's box to the root (gather) or back.
  void run(const void* from, void* to, bool to_root) {
    const std::size_t n = static_cast<std::size_t>(size_);
    std::vector<int> send_counts(n, 0), recv_counts(n, 0), zero(n, 0);
    std::vector<MPI_Datatype> send_types(n, MPI_DOUBLE), recv_types(n, MPI_DOUBLE);
    // The box of this rank goes to (comes from) the root; the root's r-th
    // part of the global array comes from (goes to) rank r.
    std::vector<int>& box_counts = to_root ? send_counts : recv_counts;
    std::vector<MPI_Datatype>& box_types = to_root ? send_types : recv_types;
    box_counts[static_cast<std::size_t>(root_)] = 1;
    box_types[static_cast<std::size_t>(root_)] = memory_.get();
    if (rank_ == root_) {
      std::vector<int>& counts = to_root ? recv_counts : send_counts;
      std::vector<MPI_Datatype>& types = to_root ? recv_types : send_types;
      for (std::size_t r = 0; r < n; ++r) {
        counts[r] = 1;
        types[r] = global_[r].get();
      }
    }
    // MPI wants a buffer even where it sends or receives nothing.
    static double none = 0;
    HYMPI_CHECK_MPI(MPI_Alltoallw(from ? from : &none, send_counts.data(), zero.data(),
                                  send_types.data(), to ? to : &none, recv_counts.data(),
                                  zero.data(), recv_types.data(), comm_));
  }

 private:
  MPI_Comm comm_;
  int root_;
  int rank_ = 0, size_ = 1;
  detail::OwnedType memory_;
  std::vector<detail::OwnedType> global_;
};

}  // namespace

void gather_field(Domain& domain, const Field& field, double* global, int root) {
  Transfer transfer(domain, field, global, root, "gather_field");
  transfer.run(field.data(), global, true);
}

void scatter_field(Domain& domain, const double* global, Field& field, int root) {
  Transfer transfer(domain, field, global, root, "scatter_field");
  transfer.run(global, field.data(), false);
}

}  // namespace hympi
