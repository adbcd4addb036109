// What the command line's values are made of, parsed strictly (no MPI, no
// state): numbers, grids, byte counts, lists, and the names of SolveConfig's
// parameters as the CLI spells them. Used by the option parser
// (options.cpp) and by the benchmarks' own options (commbench/), so that
// neither includes the other.
#pragma once

#include <array>
#include <functional>
#include <string>
#include <vector>

namespace hympi::cli {

// The checks of threads per rank and ranks per node shared by every command
// (solve's also run in the library's validate_config).
std::vector<std::string> check_threads_and_nodes(int threads, int ranks_per_node, int ranks);

std::vector<std::string> split(const std::string& s, char sep);

// The library's messages name SolveConfig's parameters in backquotes
// (`iters`): without the quotes (iters), for configs the user did not write
// flag by flag (hympi bench overlap). name_parameters (options.hpp) names
// them as the solve flags that set them.
std::string plain_parameters(const std::string& message);
// Each backquoted name in `message` replaced by rename(name), the quotes dropped.
std::string rename_parameters(const std::string& message,
                              const std::function<std::string(const std::string&)>& rename);
// "unknown scheme 'NAME' (valid: ...)": for Options::unknown_scheme.
std::string unknown_scheme_message(const std::string& name);

// Strict number parsing: the whole string must be a number in range.
bool parse_int(const std::string& text, long long lo, long long hi, long long& out);
bool parse_double(const std::string& text, double& out);
// "NXxNYxNZ" or "N^3"; on failure returns false and explains in `why`.
enum class GridKind { Points, Processes };  // --grid NXxNYxNZ, --proc-grid PXxPYxPZ
bool parse_grid(const std::string& text, std::array<int, 3>& out, std::string& why,
                GridKind kind = GridKind::Points);
// A byte count (docs/units.md, the same grammar as hympi-lab's): a decimal
// number without sign (4096, 1.5, 1e6, 2.5e3) and an optional unit: B, k or
// kB (10^3), M or MB (10^6), G or GB (10^9), KiB (2^10), MiB (2^20), GiB
// (2^30). The bytes must come out whole (1.5B is refused), and in
// 1 .. 2^30 (1GiB and 1GB are accepted, 2GB is not). Every byte-valued
// option of hympi bench parses with this (commbench/driver.cpp).
bool parse_bytes(const std::string& text, long long& out);
// The same, saying why not: not a byte count at all, or one out of 1 .. 2^30.
enum class ByteParse { Ok, Malformed, OutOfRange };
ByteParse parse_bytes_checked(const std::string& text, long long& out);
// True for an optional sign and digits only (a number, maybe too large).
bool looks_like_integer(const std::string& text);
// The message for an integer option's bad value: "--iters 99999999999 is out
// of range: accepted 0 .. 1073741824 iterations", or "--iters 'x': expected
// an integer, 0 .. 1073741824 iterations".
std::string int_range_message(const std::string& name, const std::string& text, long long lo,
                              long long hi, const std::string& unit);

}  // namespace hympi::cli
