// Every kernel and scheme file registers, each kernel's declared facts hold
// together, and solve() leaves the caller's OpenMP settings as they were.
#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>

#include <set>

#include "hympi/hympi.hpp"

using namespace hympi;

TEST(Registry, EveryKernelFileRegisters) {
  // HYMPI_KERNEL_ENTRIES: the files under src/kernels/ that define an entry.
  ASSERT_EQ(kernels().size(), static_cast<std::size_t>(HYMPI_KERNEL_ENTRIES));
  ASSERT_EQ(kernel_registry().size(), kernels().size());
  std::set<std::string> names;
  for (std::size_t i = 0; i < kernels().size(); ++i) {
    const KernelInfo& k = kernels()[i]->info();
    EXPECT_EQ(static_cast<std::size_t>(k.kind), i) << k.name << " declares another kernel's kind";
    EXPECT_TRUE(names.insert(k.name).second) << k.name;
    EXPECT_EQ(&kernel_for(k.kind), kernels()[i]);
    EXPECT_EQ(kernel_named(k.name), kernels()[i]);
    EXPECT_EQ(find_kernel(k.name)->kind, k.kind);
    EXPECT_STREQ(kernel_name(k.kind), k.name.c_str());
  }
}

TEST(Registry, EverySchemeFileRegisters) {
  ASSERT_EQ(scheme_registry().size(), static_cast<std::size_t>(HYMPI_SCHEME_ENTRIES));
  std::set<std::string> names;
  for (const auto& e : scheme_registry()) EXPECT_TRUE(names.insert(e.info.name).second);
}

TEST(Registry, KernelsDeclareTheirCosts) {
  for (const auto& k : kernel_registry()) {
    EXPECT_GT(k.sweeps_per_iteration, 0) << k.name;
    EXPECT_GT(k.flops_per_point, 0) << k.name;
    EXPECT_GT(k.bytes_per_point, 0) << k.name;
    EXPECT_GT(k.fields, 0) << k.name;
    EXPECT_TRUE(k.supports(MatrixFormat::Stencil)) << k.name;
    if (k.supports(MatrixFormat::Crs)) {
      // The stored forms stream the matrix besides the vectors (cg also q).
      EXPECT_GE(k.bytes_per_point_crs, k.bytes_per_point + kCrsMatrixBytesPerPoint) << k.name;
      EXPECT_DOUBLE_EQ(k.bytes_per_point_crs - kCrsMatrixBytesPerPoint,
                       k.bytes_per_point_sell - kSellMatrixBytesPerPoint) << k.name;
    }
    EXPECT_EQ(k.periodic == PeriodicRule::Allowed, k.periodic_why.empty()) << k.name;
    // A kernel left out of the default study says why.
    EXPECT_EQ(k.default_study, k.default_study_why.empty()) << k.name;
  }
  // The default study keeps its kernels; pipelined cg only when asked for.
  ASSERT_NE(find_kernel("pipecg"), nullptr);
  EXPECT_FALSE(find_kernel("pipecg")->default_study);
  for (const char* name : {"jacobi", "rbgs", "spmv", "cg"}) EXPECT_TRUE(find_kernel(name)->default_study) << name;
  EXPECT_EQ(kCrsMatrixBytesPerPoint, 7 * 12 + 8);
}

TEST(Registry, ReferenceThroughTheEntry) {
  for (const Kernel* k : kernels()) {
    const ReferenceResult r = k->reference({{4, 3, 5}, false, 2, 1e-6, 50});
    EXPECT_EQ(r.field.size(), 60u) << k->info().name;
    EXPECT_GT(r.iterations, 0) << k->info().name;
  }
}

TEST(Solve, LeavesTheCallersOpenMpSettings) {
  omp_set_dynamic(1);
  omp_set_num_threads(3);
  SolveConfig c;
  c.grid = {8, 8, 8};
  c.threads = 2;
  c.iters = 2;
  ASSERT_TRUE(validate_config(c, 1, nullptr, 0).empty());
  solve(MPI_COMM_SELF, c);
  EXPECT_EQ(omp_get_dynamic(), 1);
  EXPECT_EQ(omp_get_max_threads(), 3);
  omp_set_dynamic(0);
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  MPI_Finalize();
  return rc;
}
