// What gather/scatter (field_io.cpp) and the MPI-IO file path
// (field_io_file.cpp) share: agreed errors, the checks of a field against
// its domain, and the MPI datatypes of a rank's box. Private to the library.
#pragma once

#include <mpi.h>

#include <string>

#include "hympi/domain.hpp"
#include "hympi/error.hpp"
#include "hympi/field.hpp"

namespace hympi {
namespace detail {

// What kind of exception an agreed error becomes.
enum class Fault { None = 0, Usage = 1, Output = 2 };

// Collective: when any rank has a fault, every rank throws the one of the
// lowest such rank (UsageError or OutputError, its message), so that all
// ranks leave together and none waits in a later collective.
void agree(MPI_Comm comm, Fault fault, const std::string& message);

// The field's problem for this domain ("" when none): empty, or another
// size or halo than the domain's fields. Local.
std::string field_problem(const Domain& domain, const Field& field);

// An MPI error code as one line (MPI libraries' texts may hold newlines).
std::string mpi_text(int code);

// A derived datatype freed on every path.
class OwnedType {
 public:
  OwnedType() = default;
  ~OwnedType() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (type_ != MPI_DATATYPE_NULL && !finalized) MPI_Type_free(&type_);
  }
  OwnedType(const OwnedType&) = delete;
  OwnedType& operator=(const OwnedType&) = delete;
  OwnedType(OwnedType&& other) noexcept : type_(other.type_) { other.type_ = MPI_DATATYPE_NULL; }
  MPI_Datatype get() const { return type_; }
  // Takes a new, uncommitted type and commits it.
  void reset(MPI_Datatype type) {
    HYMPI_CHECK_MPI(MPI_Type_commit(&type));
    type_ = type;
  }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

// The own points of a field in its halo'd array, as one datatype over
// field.data() (a subarray: no packing copy); Packed and CacheLine rows alike.
void make_memory_type(const Field& field, OwnedType& type);

// A box (offset, size) of the global grid, as a subarray of the whole
// NX*NY*NZ array, i fastest.
void make_global_type(const std::array<int, 3>& global, const std::array<int, 3>& offset,
                      const std::array<int, 3>& size, OwnedType& type);

}  // namespace detail
}  // namespace hympi
