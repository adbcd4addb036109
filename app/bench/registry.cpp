// The benchmarks of `hympi bench`: one line each. A new benchmark is a new
// file plus one line here.
#include "bench.hpp"

namespace hympi::bench {

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
