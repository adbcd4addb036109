// The C API's Field I/O (hympi/hympi.h's last section) over
// hympi/field_io.hpp. A field handle that is NULL or of another domain on
// any rank is agreed over the domain's communicator first, so that every
// rank returns HYMPI_ERR_USAGE and none waits in the collective.
#include <string>

#include "hympi/field_io.hpp"
#include "hympi/hympi.h"
#include "c_api_support.hpp"
#include "field_io_support.hpp"

namespace {

using hympi::detail::c_api_domain;
using hympi::detail::c_api_field;
using hympi::detail::c_api_guarded;

// The field of `field`, checked on every rank of the domain alike.
hympi::Field& agreed_field(hympi_domain domain, hympi_field field) {
  hympi::Domain& d = c_api_domain(domain);
  hympi::Field* f = c_api_field(domain, field);
  int rank = 0;
  HYMPI_CHECK_MPI(MPI_Comm_rank(d.comm(), &rank));
  const std::string problem =
      f ? "" : "the field on rank " + std::to_string(rank) + " is NULL or belongs to another domain";
  hympi::detail::agree(d.comm(), f ? hympi::detail::Fault::None : hympi::detail::Fault::Usage, problem);
  return *f;
}

// A C string argument as the same text on every rank's check ("" for NULL).
std::string text(const char* s) { return s ? s : ""; }

}  // namespace

extern "C" {

int hympi_domain_grid(hympi_domain domain, int grid[3]) {
  return c_api_guarded("hympi_domain_grid", [&] {
    const hympi::LocalDomain& l = c_api_domain(domain).local();
    if (!grid) throw hympi::UsageError("grid must not be NULL");
    for (int d = 0; d < 3; ++d) grid[d] = l.global[d];
  });
}

int hympi_field_gather(hympi_domain domain, hympi_field field, int root, double* global) {
  return c_api_guarded("hympi_field_gather", [&] {
    hympi::gather_field(c_api_domain(domain), agreed_field(domain, field), global, root);
  });
}

int hympi_field_scatter(hympi_domain domain, const double* global, int root, hympi_field field) {
  return c_api_guarded("hympi_field_scatter", [&] {
    hympi::scatter_field(c_api_domain(domain), global, agreed_field(domain, field), root);
  });
}

int hympi_field_write(hympi_domain domain, hympi_field field, const char* path, const char* name) {
  return c_api_guarded("hympi_field_write", [&] {
    hympi::write_field(c_api_domain(domain), agreed_field(domain, field), text(path), text(name));
  });
}

int hympi_field_read(hympi_domain domain, hympi_field field, const char* path) {
  return c_api_guarded("hympi_field_read", [&] {
    hympi::read_field(c_api_domain(domain), agreed_field(domain, field), text(path));
  });
}

}  // extern "C"
