// Unit tests of hympi bench's pure parts: b_eff's averaging on synthetic
// numbers, the 21 lengths, byte counts with suffixes, option parsing and
// validation. No MPI communication.
#include <gtest/gtest.h>

#include <cmath>

#include "commbench/bench.hpp"
#include "options.hpp"

using namespace hympi;
using namespace hympi::bench;

TEST(BeffAverage, ArithmeticOverLengthsGeometricOverPatternsAndKinds) {
  // ring patterns: means 2 and 8 -> geometric 4; random: means 9 and 1 -> 3
  const std::vector<std::vector<double>> ring = {{1, 3}, {4, 12}};
  const std::vector<std::vector<double>> random = {{6, 12}, {0.5, 1.5}};
  const BeffAverages a = beff_average(ring, random);
  ASSERT_EQ(a.per_pattern.size(), 4u);
  EXPECT_DOUBLE_EQ(a.per_pattern[0], 2);
  EXPECT_DOUBLE_EQ(a.per_pattern[1], 8);
  EXPECT_DOUBLE_EQ(a.per_pattern[2], 9);
  EXPECT_DOUBLE_EQ(a.per_pattern[3], 1);
  EXPECT_NEAR(a.ring, 4, 1e-12);
  EXPECT_NEAR(a.random, 3, 1e-12);
  EXPECT_NEAR(a.b_eff, std::sqrt(12.0), 1e-12);
}

TEST(BeffAverage, NotTheMeanOfAllNumbers) {
  // One ring pattern and three random ones: the kinds weigh equally.
  const BeffAverages a = beff_average({{100, 100}}, {{1}, {1}, {1}});
  EXPECT_NEAR(a.ring, 100, 1e-12);
  EXPECT_NEAR(a.random, 1, 1e-12);
  EXPECT_NEAR(a.b_eff, 10, 1e-12);
}

TEST(BeffAverage, Means) {
  EXPECT_DOUBLE_EQ(arithmetic_mean({1, 2, 6}), 3);
  EXPECT_NEAR(geometric_mean({1, 2, 4}), 2, 1e-12);
  EXPECT_EQ(geometric_mean({}), 0);
  EXPECT_EQ(geometric_mean({3, 0}), 0);
}

TEST(BeffLengths, TwentyOneFromOneByteToLmax) {
  const auto l = beff_lengths(8000000);
  ASSERT_EQ(l.size(), 21u);
  for (int i = 0; i <= 12; ++i) EXPECT_EQ(l[i], 1LL << i);
  EXPECT_EQ(l.back(), 8000000);
  for (std::size_t i = 1; i < l.size(); ++i) EXPECT_LT(l[i - 1], l[i]);
  // geometric: equal ratios between the 8 steps above 4 kB
  const double q = std::pow(8000000.0 / 4096.0, 1.0 / 8);
  for (int i = 13; i < 20; ++i) EXPECT_NEAR(static_cast<double>(l[i]) / l[i - 1], q, 1e-3);
}

TEST(BeffLengths, LoopCountShrinksWithSize) {
  EXPECT_EQ(loop_count(1), 10);
  EXPECT_EQ(loop_count(1 << 20), 1);
  EXPECT_GE(loop_count(4096), loop_count(65536));
}

TEST(ParseBytes, SuffixesAreDecimalOrBinary) {
  long long v = 0;
  EXPECT_TRUE(cli::parse_bytes("4096", v));
  EXPECT_EQ(v, 4096);
  EXPECT_TRUE(cli::parse_bytes("8MB", v));
  EXPECT_EQ(v, 8000000);
  EXPECT_TRUE(cli::parse_bytes("2M", v));
  EXPECT_EQ(v, 2000000);
  EXPECT_TRUE(cli::parse_bytes("64kB", v));
  EXPECT_EQ(v, 64000);
  EXPECT_TRUE(cli::parse_bytes("4KiB", v));
  EXPECT_EQ(v, 4096);
  EXPECT_TRUE(cli::parse_bytes("1MiB", v));
  EXPECT_EQ(v, 1 << 20);
  // docs/units.md: the forms hympi-lab accepts too (test_units.py).
  const std::pair<const char*, long long> good[] = {{"1k", 1000},       {"1KiB", 1024},  {"1.5MB", 1500000},
                                                    {"1e6", 1000000},   {"2.5e3", 2500}, {"0.5KiB", 512},
                                                    {"64B", 64},        {"1GiB", 1 << 30}};
  for (const auto& [text, bytes] : good) {
    EXPECT_TRUE(cli::parse_bytes(text, v)) << text;
    EXPECT_EQ(v, bytes) << text;
  }
  for (const char* bad : {"", "0", "-1", "MB", "8XB", "1.5B", "2GB", "+3", "8 MB", "1e", "1.2.3", "e6",
                          "1e-1", "99999999999999999999999999999"})
    EXPECT_FALSE(cli::parse_bytes(bad, v)) << bad;
}

TEST(BenchOptions, ParsesWithTheBenchmarksDefaults) {
  const auto o = cli::parse({"bench", "internode", "--sizes", "2MB,16MB", "--repeat", "4",
                             "--ranks-per-node", "2"});
  ASSERT_TRUE(o.errors.empty()) << o.errors[0];
  EXPECT_EQ(o.command, cli::Command::Bench);
  EXPECT_EQ(o.bench.name, "internode");
  EXPECT_EQ(o.bench.args.list("--sizes"), (std::vector<long long>{2000000, 16000000}));
  EXPECT_EQ(o.bench.repeat, 4);
  EXPECT_EQ(o.solve.ranks_per_node, 2);
  // Defaults come from the benchmark's own table.
  EXPECT_EQ(cli::parse({"bench", "ratio"}).bench.args.list("--sizes"),
            (std::vector<long long>{1000, 10000, 100000, 1000000}));
  EXPECT_EQ(cli::parse({"bench", "beff"}).bench.args.get("--lmax"), 8000000);
  EXPECT_EQ(cli::parse({"bench", "pack"}).bench.args.int_list("--faces"), (std::vector<int>{16, 32, 64}));
  // Every default parses with its own parser, and --help lists every option.
  for (const auto& b : benchmark_registry()) {
    const BenchArgs a = default_args(b);
    for (const auto& opt : b.options) {
      EXPECT_EQ(a.values.count(opt.name), 1u) << b.name << " " << opt.name;
      EXPECT_NE(options_help(b).find(opt.name), std::string::npos) << b.name << " " << opt.name;
    }
  }
}

TEST(BenchOptions, BadInputIsReported) {
  EXPECT_FALSE(cli::parse({"bench", "nope"}).errors.empty());
  EXPECT_FALSE(cli::parse({"bench"}).errors.empty());
  EXPECT_FALSE(cli::parse({"bench", "ratio", "--sizes", ""}).errors.empty());
  EXPECT_FALSE(cli::parse({"bench", "ratio", "--sizes", "1,,2"}).errors.empty());
  EXPECT_FALSE(cli::parse({"bench", "overlap", "--nk-loc", "0"}).errors.empty());
  // An option belongs to its benchmark.
  EXPECT_FALSE(cli::parse({"bench", "beff", "--faces", "4"}).errors.empty());
  EXPECT_TRUE(cli::parse({"bench", "--help"}).help);
}

namespace {
BenchOptions named(const std::string& name) {
  BenchOptions b;
  b.name = name;
  if (const Benchmark* bm = find_benchmark(name)) b.args = default_args(*bm);
  return b;
}
RunShape shape(int ranks, int ranks_per_node, int threads, int provided, const NodeMap& real,
               double mem) {
  RunShape s;
  s.ranks = ranks;
  s.ranks_per_node = ranks_per_node;
  s.threads = threads;
  s.provided = provided;
  s.real_nodes = &real;
  s.node_memory_bytes = mem;
  return s;
}
}  // namespace

TEST(BenchValidate, RanksNodesLmaxThreads) {
  NodeMap one;  // one real node
  const double mem = 16e9;
  BenchOptions b = named("beff");
  auto check = [&](int ranks, int rpn, int threads, int provided, const NodeMap& real, double m) {
    return validate(b, shape(ranks, rpn, threads, provided, real, m));
  };
  EXPECT_TRUE(check(2, 0, 1, MPI_THREAD_FUNNELED, one, mem).empty());
  EXPECT_FALSE(check(1, 0, 1, MPI_THREAD_FUNNELED, one, mem).empty());
  b.args.values["--lmax"] = {4095};
  EXPECT_FALSE(check(2, 0, 1, MPI_THREAD_FUNNELED, one, mem).empty());
  b.args.values["--lmax"] = {static_cast<long long>(mem / 128) + 1};
  EXPECT_FALSE(check(2, 0, 1, MPI_THREAD_FUNNELED, one, mem).empty());
  NodeMap four;  // one real node of 4 ranks: 16e9 / 4 / 128 = 31.25e6 bytes each
  four.ranks_per_node = {4};
  b.args.values["--lmax"] = {31000000};
  EXPECT_TRUE(check(4, 0, 1, MPI_THREAD_FUNNELED, four, mem).empty());
  b.args.values["--lmax"] = {32000000};
  EXPECT_FALSE(check(4, 0, 1, MPI_THREAD_FUNNELED, four, mem).empty());
  b.args.values["--lmax"] = {400000000};  // memory enough, but 6 Lmax overflow an int count
  EXPECT_FALSE(check(2, 0, 1, MPI_THREAD_FUNNELED, one, 1e13).empty());
  b = named("internode");
  EXPECT_FALSE(check(4, 0, 1, MPI_THREAD_FUNNELED, one, mem).empty());  // one real node
  EXPECT_TRUE(check(4, 2, 1, MPI_THREAD_FUNNELED, one, mem).empty());   // two virtual
  EXPECT_FALSE(check(4, 3, 1, MPI_THREAD_FUNNELED, one, mem).empty());  // 3 does not divide 4
  b = named("overlap");  // its default depths are checked as solve runs: a real node map
  NodeMap two;
  two.ranks_per_node = {2};
  two.node_of_rank = {0, 0};
  EXPECT_FALSE(check(2, 0, 1, MPI_THREAD_MULTIPLE, two, mem).empty());  // needs 2 threads
  EXPECT_TRUE(check(2, 0, 2, MPI_THREAD_MULTIPLE, two, mem).empty());
  EXPECT_FALSE(check(2, 0, 2, MPI_THREAD_FUNNELED, two, mem).empty());  // multiple
  b = named("fast");
  const auto e = check(2, 0, 1, MPI_THREAD_FUNNELED, one, mem);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_NE(e[0].find("beff, cyclic3d, internode, ratio, overlap, pack"), std::string::npos);
}

TEST(Schemes, PureMpiBaselineIsChosenByProperties) {
  const SchemeInfo& s = pure_mpi_scheme().info;
  EXPECT_FALSE(s.overlap);
  EXPECT_EQ(s.min_threads, 1);
  EXPECT_EQ(s.name, "masteronly");  // the registry's pure-MPI scheme today
  EXPECT_TRUE(cli::is_pure_mpi(pure_mpi_scheme(), 1));
  EXPECT_FALSE(cli::is_pure_mpi(pure_mpi_scheme(), 2));
}
