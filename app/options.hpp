// Command-line parsing for the hympi executable. Parsing is pure (no MPI) and
// deterministic (the arguments and the default thread count decide it), so
// that it is unit-tested directly; main() validates on rank 0 and broadcasts
// the arguments, and every rank parses the same ones.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "commbench/bench.hpp"
#include "hympi/solver.hpp"

namespace hympi::cli {

enum class Command { None, Solve, Info, Bench };

struct Options {
  Command command = Command::None;
  bool help = false;
  std::string help_text;            // what --help prints for this command
  SolveConfig solve;                // also threads / ranks per node of info and bench
  bench::BenchOptions bench;        // hympi bench NAME
  std::string json_path;            // --json PATH ("" = none)
  std::string trace_path;           // solve --trace PATH ("" = none; sets solve.trace)
  bool json_stdout = false;         // info --json without a path
  std::string thread_level;         // --thread-level (empty: scheme's need)
  std::string unknown_scheme;       // --scheme's value when no scheme has that name
                                    // (solve.scheme is then null)
  std::set<std::string> given;      // the options given (names, "--iters")
  std::vector<std::string> errors;  // every problem found, at once
};

Options parse(const std::vector<std::string>& args, int default_threads);
// With the default thread count of this process's environment.
Options parse(const std::vector<std::string>& args);
// $OMP_NUM_THREADS (its first count) if it is a number 1..1024, else 1;
// `warning`, if given, says why a value that is set was not used.
int threads_from_environment(std::string* warning = nullptr);

// The checks of threads per rank and ranks per node shared by every command
// (solve's also run in the library's validate_config).
std::vector<std::string> check_threads_and_nodes(int threads, int ranks_per_node, int ranks);

std::vector<std::string> split(const std::string& s, char sep);

// The library's messages name SolveConfig's parameters in backquotes
// (`iters`); the CLI shows them as the solve flags that set them (--iters),
// from the one table in options.cpp. as_flags false: plain names (iters),
// for configs the user did not write flag by flag (hympi bench overlap).
std::string name_parameters(const std::string& message, bool as_flags = true);
// "unknown scheme 'NAME' (valid: ...)": for Options::unknown_scheme.
std::string unknown_scheme_message(const std::string& name);

// Strict number parsing: the whole string must be a number in range.
bool parse_int(const std::string& text, long long lo, long long hi, long long& out);
bool parse_double(const std::string& text, double& out);
// "NXxNYxNZ" or "N^3"; on failure returns false and explains in `why`.
enum class GridKind { Points, Processes };  // --grid NXxNYxNZ, --proc-grid PXxPYxPZ
bool parse_grid(const std::string& text, std::array<int, 3>& out, std::string& why,
                GridKind kind = GridKind::Points);
// A byte count: digits (no sign) with an optional suffix kB or k (10^3), MB
// or M (10^6), GB or G (10^9), KiB (2^10), MiB (2^20), GiB (2^30); the value
// must lie in 1 .. 2^30 (1GiB and 1GB are accepted, 2GB is not). Every
// byte-valued option of hympi bench parses with this (commbench/driver.cpp).
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

// The thread level a run asks MPI for: --thread-level if given, else what the
// scheme needs (FUNNELED if the scheme is unknown, so that init still works
// and the error is reported after it).
int requested_thread_level(const Options& o);
// "single" | "funneled" | "serialized" | "multiple" -> MPI constant, or -1.
int thread_level_from_name(const std::string& name);

std::string main_usage();
std::string version_text();  // "hympi 0.1.0 (git revision)"

}  // namespace hympi::cli
