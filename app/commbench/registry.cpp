// The benchmarks of `hympi bench`. A new benchmark is a new file under
// app/commbench/ (its options, checks and run) that defines
// `Benchmark <name>_benchmark()`, plus its line in the list below (in the
// order `hympi bench --help` lists them). CMake compiles every file there and
// stops with the line to add when a file's benchmark is not listed.
#include "bench.hpp"

#define HYMPI_BENCHMARK_LIST(X) \
  X(beff)                       \
  X(cyclic3d)                   \
  X(internode)                  \
  X(ratio)                      \
  X(overlap)                    \
  X(pack)

namespace hympi::bench {

#define HYMPI_BENCHMARK_DECLARE(file) Benchmark file##_benchmark();
HYMPI_BENCHMARK_LIST(HYMPI_BENCHMARK_DECLARE)
#undef HYMPI_BENCHMARK_DECLARE

const std::vector<Benchmark>& benchmark_registry() {
#define HYMPI_BENCHMARK_ENTRY(file) file##_benchmark(),
  static const std::vector<Benchmark> registry = {HYMPI_BENCHMARK_LIST(HYMPI_BENCHMARK_ENTRY)};
#undef HYMPI_BENCHMARK_ENTRY
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
