// Command-line parsing for the hympi executable. Parsing is pure (no MPI) and
// deterministic (the arguments and the default thread count decide it), so
// that it is unit-tested directly; main() parses once per process, validates
// on rank 0 and broadcasts rank 0's invocation, so that every rank runs the
// same options. The option tables are in option_table.hpp; the values'
// parsers (numbers, grids, byte counts) in parse.hpp.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "commbench/bench.hpp"
#include "parse.hpp"
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

// The library's messages name SolveConfig's parameters in backquotes
// (`iters`); the CLI shows them as the solve flags that set them (--iters),
// from the solve options' table (option_table.cpp). as_flags false: plain
// names (plain_parameters).
std::string name_parameters(const std::string& message, bool as_flags = true);

// The thread level a run asks MPI for: --thread-level if given, else what the
// scheme needs (FUNNELED if the scheme is unknown, so that init still works
// and the error is reported after it).
int requested_thread_level(const Options& o);
// "single" | "funneled" | "serialized" | "multiple" -> MPI constant, or -1.
int thread_level_from_name(const std::string& name);

std::string main_usage();
std::string version_text();  // "hympi 0.1.0 (git revision)"

}  // namespace hympi::cli
