// Results as a human table and as JSON records. Nothing here talks MPI.
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

#include "hympi/scheme.hpp"
#include "hympi/solver.hpp"

namespace hympi::cli {

// {"min", "median", "max"}: how every time is reported.
nlohmann::json stats_json(const Stats& s);

// A run of pure_mpi_scheme() (scheme.hpp) with one thread: pure MPI, class 1.
bool is_pure_mpi(const SchemeEntry& scheme, int threads);

nlohmann::json solve_record(const SolveResult& r);
void print_solve(std::ostream& out, const SolveResult& r, int ranks);

// hympi info: the document (context, schemes, kernels) and its text form.
// `context` is make_context's block; `provided` marks the schemes available.
nlohmann::json info_document(const nlohmann::json& context, int provided);
void print_info(std::ostream& out, const nlohmann::json& doc, const NodeMap& nodes, int requested,
                int provided);

// Can `path` be written? Checked before any work, changing nothing
// (hympi::check_writable_path: "-" is stdout, links are followed).
bool check_writable(const std::string& path, std::string& why);
// Writes the document ("-": stdout; a link is followed) via a temporary file,
// fsync and a rename (hympi/output_file.hpp), so that a failed write leaves
// no partial file and keeps an earlier one. Throws OutputError ("cannot
// write PATH: reason") on failure.
void write_document(const std::string& path, const nlohmann::json& doc);
// "1 thread", "2 threads".
std::string plural(long long n, const std::string& noun);

}  // namespace hympi::cli
