#include "trace.hpp"

#include "hympi/trace.hpp"

namespace hympi::cli {

nlohmann::json trace_document(const SolveResult& r, const nlohmann::json& context,
                              std::size_t* events) {
  const SolveConfig& c = r.config;
  TraceMeta meta;
  meta.kernel = kernel_name(c.kernel);
  meta.format = format_name(c.format);
  meta.scheme = c.scheme->info.name;
  meta.grid = c.grid;
  meta.threads = c.threads;
  meta.reserved = r.reserved_used;
  meta.iters = r.iterations;
  meta.repeat = c.repeat;
  meta.repetition = "median";
  return trace_document(meta, r.trace, r.nodes, context, events);
}

}  // namespace hympi::cli
