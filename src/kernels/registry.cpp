// The kernel registry: HYMPI_KERNEL_LIST (kernels.hpp) expanded. A kernel is
// its file under src/kernels/ plus its line in that list; CMake checks at
// configure time that every file defining `<name>_kernel()` is listed.
#include <stdexcept>

#include "hympi/kernel.hpp"

namespace hympi {

#define HYMPI_KERNEL_DECLARE(kind, name) const Kernel& name##_kernel();
HYMPI_KERNEL_LIST(HYMPI_KERNEL_DECLARE)
#undef HYMPI_KERNEL_DECLARE

const std::vector<const Kernel*>& kernels() {
#define HYMPI_KERNEL_ENTRY(kind, name) &name##_kernel(),
  static const std::vector<const Kernel*> all = {HYMPI_KERNEL_LIST(HYMPI_KERNEL_ENTRY)};
#undef HYMPI_KERNEL_ENTRY
  return all;
}

const std::vector<KernelInfo>& kernel_registry() {
  static const std::vector<KernelInfo> infos = [] {
    std::vector<KernelInfo> v;
    for (const Kernel* k : kernels()) v.push_back(k->info());
    return v;
  }();
  return infos;
}

const Kernel* kernel_named(const std::string& name) {
  for (const Kernel* k : kernels())
    if (k->info().name == name) return k;
  return nullptr;
}

const KernelInfo* find_kernel(const std::string& name) {
  for (const auto& k : kernel_registry())
    if (k.name == name) return &k;
  return nullptr;
}

const Kernel& kernel_for(KernelKind kind) {
  for (const Kernel* k : kernels())
    if (k->info().kind == kind) return *k;
  throw std::logic_error("kernel " + std::to_string(static_cast<int>(kind)) + " is not registered");
}

const KernelInfo& kernel_info(KernelKind kind) { return kernel_for(kind).info(); }

const char* format_name(MatrixFormat f) {
  switch (f) {
    case MatrixFormat::Crs: return "crs";
    case MatrixFormat::Sell: return "sell";
    case MatrixFormat::Stencil: break;
  }
  return "stencil";
}

const char* kernel_name(KernelKind kind) {
  for (const Kernel* k : kernels())
    if (k->info().kind == kind) return k->info().name.c_str();
  return "?";
}

ReferenceResult reference_solve(KernelKind kernel, const std::array<int, 3>& global, bool periodic,
                                int iters, double tol, int max_iters) {
  return kernel_for(kernel).reference({global, periodic, iters, tol, max_iters});
}

}  // namespace hympi
