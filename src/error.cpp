#include "hympi/error.hpp"

#include <string>

namespace hympi {

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) return "unknown MPI error";
  return std::string(text, static_cast<std::size_t>(len));
}

void throw_mpi_error(int code, const char* call, const char* file, int line) {
  throw MpiError(std::string("MPI error in ") + call + " at " + file + ":" +
                 std::to_string(line) + ": " + mpi_error_text(code));
}

}  // namespace hympi
