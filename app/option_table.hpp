// The options of hympi's commands, one table per command. A row names the
// flag, the word for its value, the SolveConfig parameter it sets and its
// help, and carries its handler: the parser (options.cpp), the help texts and
// name_parameters all read these rows, so that an option is written once.
// Private to the command line.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "options.hpp"

namespace hympi::cli {

// What the solve handlers saw (the required options).
struct SolveSeen {
  bool kernel = false, grid = false;
  bool kernel_known = false;  // --kernel named a registered kernel
};

struct OptionRow {
  std::string flag;       // "--iters"
  std::string metavar;    // "T"; "" for a flag that takes no value
  std::string parameter;  // SolveConfig's name for what it sets ("iters"); "" for none
  std::string help;       // lines after the first are indented to the help column
  std::function<void(const std::string&)> set;  // the handler of its value
  std::function<void()> on;                      // the handler of a flag (metavar "")
  bool optional_value = false;  // info --json: a path may follow, or not
  bool in_help = true;          // listed among the command's options
};

// The rows of each command, their handlers writing into `o` (and `seen`).
std::vector<OptionRow> solve_options(Options& o, SolveSeen& seen);
std::vector<OptionRow> info_options(Options& o);
// hympi bench: the common options, then the named benchmark's own (their
// help is the benchmark's options_help). list_threads: --threads is listed
// (the help of no one benchmark; one that runs threads says so in its notes).
std::vector<OptionRow> bench_options(Options& o, bool list_threads);

std::string solve_help();
std::string info_help();
std::string bench_help(const std::string& name);
std::string names_of_kernels();

}  // namespace hympi::cli
