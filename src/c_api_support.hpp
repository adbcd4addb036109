// What the C API's other source files (c_api_io.cpp) use of c_api.cpp's
// handles and error handling, without seeing its private types. Private to
// the library.
#pragma once

#include <functional>

#include "hympi/domain.hpp"
#include "hympi/field.hpp"
#include "hympi/hympi.h"

namespace hympi {
namespace detail {

// Runs body as every C API function does: HYMPI_ERR_STATE outside MPI's
// lifetime, each exception as its status code and hympi_last_error()'s
// message (prefixed with `call`), HYMPI_SUCCESS otherwise.
int c_api_guarded(const char* call, const std::function<void()>& body);

// The Domain of a handle; UsageError for a NULL or freed one.
Domain& c_api_domain(hympi_domain domain);

// The Field of a handle of `domain`; nullptr for NULL or another domain's
// (the caller agrees on it with the other ranks before a collective call).
Field* c_api_field(hympi_domain domain, hympi_field field);

}  // namespace detail
}  // namespace hympi
