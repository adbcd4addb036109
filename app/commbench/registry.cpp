// The benchmarks of `hympi bench`. A new benchmark is a new file (its
// options, checks and run, returning a Benchmark), its declaration and one
// line in the list here, and the file in CMakeLists.txt's hympi_cli sources.
#include "bench.hpp"

namespace hympi::bench {

// One per benchmark file.
Benchmark beff_benchmark();
Benchmark cyclic3d_benchmark();
Benchmark internode_benchmark();
Benchmark ratio_benchmark();
Benchmark overlap_benchmark();
Benchmark pack_benchmark();

const std::vector<Benchmark>& benchmark_registry() {
  static const std::vector<Benchmark> registry = {
      beff_benchmark(),
      cyclic3d_benchmark(),
      internode_benchmark(),
      ratio_benchmark(),
      overlap_benchmark(),
      pack_benchmark(),
  };
  return registry;
}

const Benchmark* find_benchmark(const std::string& name) {
  for (const auto& b : benchmark_registry())
    if (b.name == name) return &b;
  return nullptr;
}

std::string benchmark_names() {
  std::string s;
  for (const auto& b : benchmark_registry()) s += (s.empty() ? "" : ", ") + b.name;
  return s;
}

}  // namespace hympi::bench
