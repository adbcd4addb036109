// Error types and the one macro that checks every MPI call.
#pragma once

#include <mpi.h>

#include <stdexcept>
#include <string>

namespace hympi {

// Bad input from the user: the CLI turns it into exit code 2 on every rank.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A result file could not be written (full disk, no permission): the
// message names the path and the OS reason.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An MPI call returned an error code; the message names the call and place.
class MpiError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Text of an MPI error code (MPI_Error_string).
std::string mpi_error_text(int code);

[[noreturn]] void throw_mpi_error(int code, const char* call, const char* file, int line);

}  // namespace hympi

// Wrap every MPI call: the library sets MPI_ERRORS_RETURN on the communicators
// it owns, so errors come back here as codes and become exceptions with text.
#define HYMPI_CHECK_MPI(call)                                          \
  do {                                                                 \
    int hympi_rc_ = (call);                                            \
    if (hympi_rc_ != MPI_SUCCESS)                                      \
      ::hympi::throw_mpi_error(hympi_rc_, #call, __FILE__, __LINE__);  \
  } while (0)
