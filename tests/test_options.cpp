// hympi's option handling against bad input (issue 9), without MPI: every
// message of the classes "option that does not apply" and "message that
// misleads" from a table, then a seeded table-driven fuzz of random option
// names, values, repeats, empty strings, huge numbers and unicode through
// parse(), validate_config() and the benchmarks' validate(): never an
// exception, every problem one line, and a clean parse of a valid command.
// The same rules through mpirun, at 2 and 4 ranks: tests/robust_test.sh.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "commbench/bench.hpp"
#include "hympi/hympi.hpp"
#include "options.hpp"

using namespace hympi;
using hympi::cli::Options;
using hympi::cli::parse;

namespace {

// Every error of `args`, joined (for messages).
std::string errors_of(const Options& o) {
  std::string s;
  for (const auto& e : o.errors) s += e + " | ";
  return s;
}

struct Case {
  std::vector<std::string> args;
  std::string expected;  // a substring of one error
};

}  // namespace

TEST(Options, EveryMisleadingMessageSaysWhatIsWrong) {
  const std::vector<Case> cases = {
      // Class 2: options that do not apply are errors that name them.
      {{"solve", "--kernel", "jacobi", "--grid", "8^3", "--tol", "1e-3"}, "--tol does not apply to jacobi"},
      {{"solve", "--kernel", "rbgs", "--grid", "8^3", "--max-iters", "3"}, "--max-iters does not apply to rbgs"},
      {{"solve", "--kernel", "cg", "--grid", "8^3", "--iters", "5"}, "--iters does not apply to cg"},
      {{"solve", "--kernel", "jacobi", "--grid", "8^3", "--format", "stencil"},
       "--format does not apply to jacobi (only to spmv, cg, pipecg)"},
      {{"solve", "--kernel", "spmv", "--grid", "8^3", "--rank-order", "round-robin"},
       "--rank-order applies only with --ranks-per-node"},
      {{"bench", "beff", "--threads", "2"}, "--threads does not apply to benchmark 'beff'"},
      {{"bench", "cyclic3d", "--threads", "1"}, "--threads does not apply to benchmark 'cyclic3d'"},
      // Class 3: 64-bit parsing, the accepted range with its unit.
      {{"solve", "--kernel", "jacobi", "--grid", "8^3", "--iters", "99999999999"},
       "--iters 99999999999 is out of range: accepted 0 .. 1073741824 iterations"},
      {{"solve", "--kernel", "jacobi", "--grid", "8^3", "--iters", "-5"},
       "--iters -5 is out of range: accepted 0 .. 1073741824 iterations"},
      {{"solve", "--kernel", "jacobi", "--grid", "8^3", "--iters", "1e3"},
       "--iters '1e3': expected an integer, 0 .. 1073741824 iterations"},
      {{"solve", "--kernel", "jacobi", "--grid", "8^3", "--threads", "99999999999999999999999"},
       "--threads 99999999999999999999999 is out of range: accepted 1 .. 1024 threads"},
      {{"solve", "--kernel", "jacobi", "--grid", "8^3", "--threads", "0"}, "--threads 0 is out of range"},
      {{"solve", "--kernel", "multiple", "--grid", "8^3"}, "unknown kernel 'multiple'"},
      {{"solve", "--kernel", "jacobi", "--grid", "8^3", "--reserved", "0"},
       "--reserved 0 is out of range: accepted 1 .. 1023 threads"},
      {{"solve", "--kernel", "jacobi", "--grid", "8^3", "--repeat", "0"},
       "--repeat 0 is out of range: accepted 1 .. 100000 repetitions"},
      {{"solve", "--kernel", "jacobi", "--grid", "8^3", "--ranks-per-node", "-1"},
       "--ranks-per-node -1 is out of range: accepted 1 .. 1073741824 ranks"},
      {{"solve", "--kernel", "jacobi", "--grid", "99999999999^3"},
       "dimension '99999999999' is out of range: accepted 1 .. 1073741824"},
      {{"solve", "--kernel", "jacobi", "--grid", "8^3", "--proc-grid", "1x2"},
       "--proc-grid '1x2': expected three process counts PXxPYxPZ or P^3, got 2"},
      {{"solve", "--kernel", "jacobi", "--grid", "8^3", "--proc-grid", "0x1x1"},
       "process count '0' is out of range: accepted 1 .. 1073741824"},
      {{"solve", "--kernel", "cg", "--grid", "8^3", "--tol", "2"},
       "--tol 2 is out of range: accepted 1e-15 <= tol < 1 (relative residual)"},
      {{"solve", "--kernel", "cg", "--grid", "8^3", "--tol", "nan"}, "--tol 'nan': expected a number"},
      {{"solve", "--kernel", "cg", "--grid", "8^3", "--tol", "1e-300"},
       "--tol 1e-300 is out of range: accepted 1e-15 <= tol < 1 (relative residual; below 1e-15 only "
       "the recurrence's residual falls further, by underflow, not the true one)"},
      {{"solve", "--kernel", "jacobi", "--grid", "8^3", "--json", ""}, "--json '': empty path"},
      {{"solve", "--kernel", "jacobi", "--grid", "8^3", "--trace", ""}, "--trace '': empty path"},
      {{"info", "--json", ""}, "--json '': empty path"},
      {{"info", "--json="}, "--json= has an empty path"},
      {{"bench", "beff", "--lmax", "3GB"}, "--lmax 3GB is out of range: accepted 1 byte .. 1GiB"},
      {{"bench", "beff", "--lmax", "99999999999999999999999"}, "is out of range: accepted 1 byte .. 1GiB"},
      {{"bench", "beff", "--lmax", "8 MB"}, "--lmax '8 MB': expected a byte count such as"},
      {{"bench", "beff", "--lmax", "-8MB"}, "--lmax '-8MB': expected a byte count"},
      {{"bench", "internode", "--sizes", "1kB,5GB"}, "'5GB' is out of range: accepted 1 byte .. 1GiB"},
      {{"bench", "overlap", "--plane", "0"}, "--plane 0 is out of range: accepted 1 .. 1048576"},
      {{"bench", "overlap", "--nk-loc", "1,x"}, "'x' is not an integer: accepted 1 .. 1048576"},
      {{"bench", "pack", "--faces", "8,99999999999"}, "'99999999999' is out of range"},
  };
  for (const auto& c : cases) {
    const Options o = parse(c.args, 1);
    bool found = false;
    for (const auto& e : o.errors) found = found || e.find(c.expected) != std::string::npos;
    EXPECT_TRUE(found) << "args: " << ::testing::PrintToString(c.args) << "\nexpected: " << c.expected
                       << "\ngot: " << errors_of(o);
  }
}

TEST(Options, AnUnknownOptionsValueIsNotASecondUnknownOption) {
  const Options o = parse({"solve", "--kernel", "jacobi", "--grid", "8^3", "--bogus-flag", "3"}, 1);
  ASSERT_EQ(o.errors.size(), 1u) << errors_of(o);
  EXPECT_NE(o.errors[0].find("unknown option '--bogus-flag'"), std::string::npos);
  // A following option is still read as an option.
  const Options p = parse({"solve", "--kernel", "jacobi", "--bogus", "--grid", "8^3"}, 1);
  ASSERT_EQ(p.errors.size(), 1u) << errors_of(p);
}

TEST(Options, VersionAndHelpTexts) {
  const Options v = parse({"--version"}, 1);
  EXPECT_TRUE(v.help && v.errors.empty());
  EXPECT_EQ(v.help_text.rfind("hympi ", 0), 0u);
  // Words after --version / --help are refused, not dropped; 'help solve'
  // is solve's help.
  for (const char* first : {"--version", "-V"}) {
    const Options extra = parse({first, "extra"}, 1);
    ASSERT_EQ(extra.errors.size(), 1u) << first;
    EXPECT_NE(extra.errors[0].find("takes no arguments (got 'extra')"), std::string::npos)
        << extra.errors[0];
  }
  for (const char* first : {"--help", "help"}) {
    const Options extra = parse({first, "extra"}, 1);
    ASSERT_EQ(extra.errors.size(), 1u) << first;
    EXPECT_NE(extra.errors[0].find("takes at most a command"), std::string::npos) << extra.errors[0];
  }
  const Options hs = parse({"help", "solve"}, 1);
  EXPECT_TRUE(hs.help && hs.errors.empty()) << errors_of(hs);
  EXPECT_EQ(hs.help_text.rfind("usage: hympi solve", 0), 0u) << hs.help_text;
  const Options hb = parse({"help", "bench", "beff"}, 1);
  EXPECT_TRUE(hb.help && hb.errors.empty()) << errors_of(hb);
  EXPECT_EQ(hb.help_text, parse({"bench", "beff", "--help"}, 1).help_text);
  // The help of a benchmark that does not exist: the error, not the
  // general bench help with exit 0.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"help", "bench", "beef"}, {"bench", "beef", "--help"}}) {
    const Options h = parse(args, 1);
    EXPECT_FALSE(h.help);
    ASSERT_EQ(h.errors.size(), 1u) << errors_of(h);
    EXPECT_NE(h.errors[0].find("unknown benchmark 'beef' (valid: beff,"), std::string::npos) << h.errors[0];
  }
  EXPECT_TRUE(parse({"bench", "--help"}, 1).help);
  const Options hk = parse({"help", "solve", "--kernel"}, 1);
  ASSERT_EQ(hk.errors.size(), 1u);
  EXPECT_NE(hk.errors[0].find("got 'solve --kernel'"), std::string::npos) << hk.errors[0];
  for (const char* b : {"overlap", "pack"}) {
    const Options h = parse({"bench", b, "--help"}, 1);
    std::size_t count = 0;
    for (std::size_t at = h.help_text.find("--threads"); at != std::string::npos;
         at = h.help_text.find("--threads", at + 1))
      ++count;
    EXPECT_EQ(count, 1u) << b << ":\n" << h.help_text;
    EXPECT_EQ(h.help_text.find("Sizes are bytes"), std::string::npos) << b;
  }
  EXPECT_NE(parse({"bench", "beff", "--help"}, 1).help_text.find("Sizes are bytes"), std::string::npos);
  EXPECT_EQ(parse({"bench", "beff", "--help"}, 1).help_text.find("--threads"), std::string::npos);
  EXPECT_EQ(cli::plural(1, "thread"), "1 thread");
  EXPECT_EQ(cli::plural(3, "repetition"), "3 repetitions");
}

TEST(Options, ValidOptionsThatApplyAreAccepted) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"solve", "--kernel", "cg", "--grid", "8^3", "--tol", "1e-6", "--max-iters", "50", "--format", "crs"},
           {"solve", "--kernel", "spmv", "--grid", "8^3", "--iters", "0", "--format", "stencil"},
           {"solve", "--kernel", "jacobi", "--grid=8x9x10", "--ranks-per-node", "2", "--rank-order",
            "round-robin", "--json", "-"},
           {"bench", "pack", "--threads", "2", "--faces", "8,16"},
           {"bench", "beff", "--lmax", "1GiB"},
           {"info", "--json"},
           {"info", "--json", "-"}}) {
    const Options o = parse(args, 1);
    EXPECT_TRUE(o.errors.empty()) << ::testing::PrintToString(args) << ": " << errors_of(o);
  }
}

// The fuzz: random command lines from names and values that hit every
// parser's edges. Deterministic (seeded), so a failure is reproducible.
TEST(Options, FuzzNeverThrowsAndEveryProblemIsOneLine) {
  const std::vector<std::string> commands = {"solve", "bench", "info", "", "--help", "--version", "sovle"};
  const std::vector<std::string> benches = {"beff", "cyclic3d", "internode", "ratio", "overlap", "pack",
                                            "", "--lmax", "nope"};
  const std::vector<std::string> names = {
      "--kernel", "--grid", "--iters", "--threads", "--reserved", "--scheme", "--format", "--tol",
      "--max-iters", "--repeat", "--ranks-per-node", "--rank-order", "--proc-grid", "--json", "--trace",
      "--thread-level", "--periodic", "--help", "--lmax", "--sizes", "--plane", "--nk-loc", "--faces",
      "--bogus", "-x", "--", "---", "--grid=", "--iters=3", "--periodic=1", "", "\xc3\xa9", "3"};
  const std::vector<std::string> values = {
      "", "0", "1", "2", "-1", "3", "8^3", "8x8x8", "0x8x8", "8x8", "1x1x1", "1073741824^3", "2^3",
      "99999999999", "-99999999999", "9223372036854775807", "9223372036854775808",
      "99999999999999999999999999", "1e3", "0.5", "nan", "inf", "-inf", "1e-8", "2", "jacobi", "cg",
      "spmv", "rbgs", "funneled", "multiple", "masteronly", "adaptive", "crs", "stencil", "sequential",
      "round-robin", "multiple", "8MB", "3GB", "1GiB", "4KiB", "1kB,2kB", "1,2,4", ",", "1,,2", "x",
      "-", "/nonexistent/x.json", "\xef\xbc\x98^3", "\xe2\x80\x8b", " 8", "8 ", "+8", "0x10", "\t"};
  std::mt19937 rng(20261124);
  auto pick = [&](const std::vector<std::string>& v) { return v[rng() % v.size()]; };
  const NodeMap* no_real_nodes = nullptr;
  int clean = 0;  // command lines that parsed and went on to the run's checks
  for (int round = 0; round < 20000; ++round) {
    std::vector<std::string> args;
    const std::string cmd = pick(commands);
    if (!cmd.empty() || rng() % 2) args.push_back(cmd);
    if (cmd == "bench" && rng() % 4) args.push_back(pick(benches));
    const int n = static_cast<int>(rng() % 7);
    for (int i = 0; i < n; ++i) {
      args.push_back(pick(names));
      if (rng() % 5) args.push_back(pick(values));
    }
    Options o;
    ASSERT_NO_THROW(o = parse(args, 1 + static_cast<int>(rng() % 3)))
        << ::testing::PrintToString(args);
    for (const auto& e : o.errors) {
      // join_errors (main.cpp) lays problems out one per line; the usage
      // text of a missing command is the one multi-line message.
      if (e.rfind("no command given", 0) == 0) continue;
      EXPECT_EQ(e.find('\n'), std::string::npos) << ::testing::PrintToString(args) << ": " << e;
      EXPECT_FALSE(e.empty()) << ::testing::PrintToString(args);
    }
    if (!o.errors.empty() || o.help) continue;
    ++clean;
    // A clean parse goes on to the run's checks, on 1, 2 and 4 ranks.
    for (int ranks : {1, 2, 4}) {
      std::vector<std::string> more;
      if (o.command == cli::Command::Solve && o.solve.scheme) {
        ASSERT_NO_THROW(more = validate_config(o.solve, ranks, no_real_nodes, 24e9))
            << ::testing::PrintToString(args);
      }
      if (o.command == cli::Command::Bench) {
        bench::RunShape shape;
        shape.ranks = ranks;
        shape.ranks_per_node = o.solve.ranks_per_node;
        shape.threads = o.solve.threads;
        shape.provided = MPI_THREAD_MULTIPLE;
        shape.node_memory_bytes = 24e9;
        ASSERT_NO_THROW(more = bench::validate(o.bench, shape)) << ::testing::PrintToString(args);
      }
      for (const auto& e : more)
        EXPECT_EQ(e.find('\n'), std::string::npos) << ::testing::PrintToString(args) << ": " << e;
    }
  }
  // The generator must reach the run's checks, not only the parser's errors.
  EXPECT_GT(clean, 50);
}
