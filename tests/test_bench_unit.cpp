// Unit tests of hympi bench's pure parts: b_eff's averaging on synthetic
// numbers, the 21 lengths, byte counts with suffixes, option parsing and
// validation. No MPI communication.
#include <gtest/gtest.h>

#include <cmath>

#include "bench/bench.hpp"
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
  for (const char* bad : {"", "0", "-1", "MB", "8XB", "1.5MB", "2GB", "+3", "8 MB"})
    EXPECT_FALSE(cli::parse_bytes(bad, v)) << bad;
}

TEST(BenchOptions, ParsesAndRoundTrips) {
  const auto o = cli::parse({"bench", "internode", "--sizes", "2MB,16MB", "--repeat", "4",
                             "--ranks-per-node", "2"});
  ASSERT_TRUE(o.errors.empty()) << o.errors[0];
  EXPECT_EQ(o.command, cli::Command::Bench);
  EXPECT_EQ(o.bench.name, "internode");
  EXPECT_EQ(o.bench.sizes, (std::vector<long long>{2000000, 16000000}));
  EXPECT_EQ(o.bench.repeat, 4);
  const auto back = cli::from_json(cli::to_json(o));
  EXPECT_EQ(back.bench.name, "internode");
  EXPECT_EQ(back.bench.sizes, o.bench.sizes);
  EXPECT_EQ(back.solve.ranks_per_node, 2);
}

TEST(BenchOptions, BadInputIsReported) {
  EXPECT_FALSE(cli::parse({"bench", "nope"}).errors.empty());
  EXPECT_FALSE(cli::parse({"bench"}).errors.empty());
  EXPECT_FALSE(cli::parse({"bench", "ratio", "--sizes", ""}).errors.empty());
  EXPECT_FALSE(cli::parse({"bench", "ratio", "--sizes", "1,,2"}).errors.empty());
  EXPECT_FALSE(cli::parse({"bench", "overlap", "--nk-loc", "0"}).errors.empty());
  EXPECT_TRUE(cli::parse({"bench", "--help"}).help);
}

TEST(BenchValidate, RanksNodesLmaxThreads) {
  NodeMap one;  // one real node
  const double mem = 16e9;
  BenchOptions b;
  b.name = "beff";
  EXPECT_TRUE(validate(b, 2, 0, 1, MPI_THREAD_FUNNELED, one, mem).empty());
  EXPECT_FALSE(validate(b, 1, 0, 1, MPI_THREAD_FUNNELED, one, mem).empty());
  b.lmax = 4095;
  EXPECT_FALSE(validate(b, 2, 0, 1, MPI_THREAD_FUNNELED, one, mem).empty());
  b.lmax = static_cast<long long>(mem / 128) + 1;
  EXPECT_FALSE(validate(b, 2, 0, 1, MPI_THREAD_FUNNELED, one, mem).empty());
  NodeMap four;  // one real node of 4 ranks: 16e9 / 4 / 128 = 31.25e6 bytes each
  four.ranks_per_node = {4};
  b.lmax = 31000000;
  EXPECT_TRUE(validate(b, 4, 0, 1, MPI_THREAD_FUNNELED, four, mem).empty());
  b.lmax = 32000000;
  EXPECT_FALSE(validate(b, 4, 0, 1, MPI_THREAD_FUNNELED, four, mem).empty());
  b.lmax = 400000000;  // memory enough, but 6 Lmax overflow an int count
  EXPECT_FALSE(validate(b, 2, 0, 1, MPI_THREAD_FUNNELED, one, 1e13).empty());
  b.lmax = 8000000;
  b.name = "internode";
  EXPECT_FALSE(validate(b, 4, 0, 1, MPI_THREAD_FUNNELED, one, mem).empty());  // one real node
  EXPECT_TRUE(validate(b, 4, 2, 1, MPI_THREAD_FUNNELED, one, mem).empty());   // two virtual
  EXPECT_FALSE(validate(b, 4, 3, 1, MPI_THREAD_FUNNELED, one, mem).empty());  // 3 does not divide 4
  b.name = "overlap";
  EXPECT_FALSE(validate(b, 2, 0, 1, MPI_THREAD_MULTIPLE, one, mem).empty());  // needs 2 threads
  EXPECT_TRUE(validate(b, 2, 0, 2, MPI_THREAD_MULTIPLE, one, mem).empty());
  EXPECT_FALSE(validate(b, 2, 0, 2, MPI_THREAD_FUNNELED, one, mem).empty());  // multiple
  b.name = "fast";
  const auto e = validate(b, 2, 0, 1, MPI_THREAD_FUNNELED, one, mem);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_NE(e[0].find("beff, cyclic3d, internode, ratio, overlap, pack"), std::string::npos);
}
