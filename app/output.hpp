// Results as a human table and as JSON records. Nothing here talks MPI.
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

#include "hympi/solver.hpp"

namespace hympi::cli {

nlohmann::json solve_record(const SolveResult& r);
void print_solve(std::ostream& out, const SolveResult& r, int ranks);

// Can `path` be written? Checked before any work: creates the file if it is
// missing (and removes it again), never truncates an existing one.
bool check_writable(const std::string& path, std::string& why);
// Writes the document via a temporary file and a rename, so that a crash
// never leaves half a document. Throws std::runtime_error on failure.
void write_document(const std::string& path, const nlohmann::json& doc);

}  // namespace hympi::cli
