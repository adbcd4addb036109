// Field I/O (hympi/field_io.hpp) against a serial reference, bit for bit:
// gather to two roots and scatter back (halos untouched); a file written on
// min(3, P) ranks (a sub-communicator, halo 2, padded CacheLine rows) read
// with plain stdio (the documented layout: raw little-endian float64, i
// fastest, its sidecar and XDMF file) and read back with MPI-IO on 1, 2 and P
// ranks under several process grids; an overwrite; no temporary file left.
// Then bad input, on every rank alike (an exception, never a hang): a file
// of another grid (sidecar), a file of the wrong size without sidecar, a
// missing file, unwritable paths, a field of another domain, a bad root, a
// null global array, a bad name. Runs at any rank count; prints one line per
// failure and "N passed, N failed".
#include <dirent.h>
#include <sys/stat.h>
#include <mpi.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "hympi/hympi.hpp"

using namespace hympi;

namespace {

int g_rank = 0;
int g_size = 1;
const std::array<int, 3> kGrid{13, 10, 7};  // uneven: boxes of different sizes
constexpr double kHaloMark = -777.25;        // halo points: never read, never written

struct Tally {
  int passed = 0, failed = 0;
  void check(bool ok, const std::string& what) {
    int mine = ok ? 0 : 1, any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any) {
      ++failed;
      if (!ok) std::printf("FAIL rank %d: %s\n", g_rank, what.c_str());
    } else {
      ++passed;
    }
  }
};

// A value per global point whose bits differ everywhere (no round numbers).
double reference(int i, int j, int k, double shift = 0) {
  return std::sin(0.37 * i + 0.011 * j * j + shift) * 1e3 + k / 3.0 + 1e-9 * i * j;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::unique_ptr<Domain> make_domain(MPI_Comm comm, std::array<int, 3> grid, int halo,
                                    std::array<int, 3> procs = {0, 0, 0}) {
  DomainConfig c;
  c.grid = grid;
  c.halo = halo;
  c.proc_grid = procs;
  c.use_environment = false;
  return std::make_unique<Domain>(comm, c);
}

// Every point of the halo'd array: the reference on the own box, the mark elsewhere.
void fill(const Domain& d, Field& f, double shift = 0) {
  const LocalDomain& l = d.local();
  const int h = f.halo();
  for (int k = -h; k < l.size[2] + h; ++k)
    for (int j = -h; j < l.size[1] + h; ++j)
      for (int i = -h; i < l.size[0] + h; ++i) {
        const bool own = i >= 0 && j >= 0 && k >= 0 && i < l.size[0] && j < l.size[1] && k < l.size[2];
        f.at(i, j, k) = own ? reference(l.offset[0] + i, l.offset[1] + j, l.offset[2] + k, shift) : kHaloMark;
      }
}

// Whether the own points hold the reference and the halo still the mark; the first miss.
std::string compare(const Domain& d, const Field& f, double shift = 0) {
  const LocalDomain& l = d.local();
  const int h = f.halo();
  for (int k = -h; k < l.size[2] + h; ++k)
    for (int j = -h; j < l.size[1] + h; ++j)
      for (int i = -h; i < l.size[0] + h; ++i) {
        const bool own = i >= 0 && j >= 0 && k >= 0 && i < l.size[0] && j < l.size[1] && k < l.size[2];
        const double want =
            own ? reference(l.offset[0] + i, l.offset[1] + j, l.offset[2] + k, shift) : kHaloMark;
        if (!same_bits(f.at(i, j, k), want)) {
          std::ostringstream s;
          s << "local (" << i << "," << j << "," << k << ") is " << f.at(i, j, k) << ", want " << want;
          return s.str();
        }
      }
  return "";
}

std::string compare_global(const std::vector<double>& global, double shift = 0) {
  for (int k = 0; k < kGrid[2]; ++k)
    for (int j = 0; j < kGrid[1]; ++j)
      for (int i = 0; i < kGrid[0]; ++i)
        if (!same_bits(global[i + kGrid[0] * (j + kGrid[1] * static_cast<std::size_t>(k))],
                       reference(i, j, k, shift)))
          return "global (" + std::to_string(i) + "," + std::to_string(j) + "," + std::to_string(k) + ")";
  return "";
}

// Runs `body`, which must throw E with `part` in its message on every rank.
template <typename E>
void expect_error(Tally& t, const std::string& what, const std::string& part, const std::function<void()>& body) {
  std::string message = "(no exception)";
  bool right_type = false;
  try {
    body();
  } catch (const E& e) {
    right_type = true;
    message = e.what();
  } catch (const std::exception& e) {
    message = std::string("wrong type: ") + e.what();
  }
  t.check(right_type && message.find(part) != std::string::npos, what + ": got '" + message + "'");
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void gather_and_scatter(Tally& t) {
  auto d = make_domain(MPI_COMM_WORLD, kGrid, 1);
  Field u = d->make_field();
  fill(*d, u);
  for (int root : {0, g_size - 1}) {
    std::vector<double> global(g_rank == root ? 1ull * kGrid[0] * kGrid[1] * kGrid[2] : 0);
    gather_field(*d, u, g_rank == root ? global.data() : nullptr, root);
    const std::string miss = g_rank == root ? compare_global(global) : "";
    t.check(miss.empty(), "gather to root " + std::to_string(root) + ": " + miss);
    Field back = d->make_field(RowLayout::CacheLine);
    fill(*d, back, 0.5);  // other values on the own points, the mark in the halo
    scatter_field(*d, global.data(), back, root);
    t.check(compare(*d, back).empty(), "scatter from root " + std::to_string(root) + ": " + compare(*d, back));
  }
}

// A file written on `writers` ranks, read back on 1, 2 and every rank under
// several process grids.
void across_rank_counts(Tally& t, const std::string& dir) {
  const int writers = std::min(3, g_size);
  const std::string path = dir + "/w.raw";
  MPI_Comm sub = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, g_rank < writers ? 0 : MPI_UNDEFINED, g_rank, &sub);
  std::array<int, 3> writer_procs{0, 0, 0};
  if (sub != MPI_COMM_NULL) {
    auto d = make_domain(sub, kGrid, 2, {1, 1, writers});
    Field u = d->make_field(RowLayout::CacheLine);
    fill(*d, u);
    write_field(*d, u, path, "u");
    writer_procs = d->grid().dims;
    MPI_Comm_free(&sub);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 0) {  // the documented layout, read without MPI
    std::vector<double> raw(1ull * kGrid[0] * kGrid[1] * kGrid[2]);
    FILE* f = std::fopen(path.c_str(), "rb");
    const std::size_t n = f ? std::fread(raw.data(), sizeof(double), raw.size() + 1, f) : 0;
    if (f) std::fclose(f);
    t.check(n == raw.size() && compare_global(raw).empty(), "the raw file holds the global array, i fastest");
    const auto doc = nlohmann::json::parse(read_text(path + ".json"));
    t.check(doc["grid"] == nlohmann::json(kGrid) && doc["dtype"] == "<f8" && doc["name"] == "u" &&
                doc["writer"]["ranks"] == writers && doc["writer"]["proc_grid"] == nlohmann::json(writer_procs) &&
                doc["numpy_shape"] == nlohmann::json({7, 10, 13}) && doc["data_file"] == "w.raw",
            "the sidecar: " + doc.dump());
    const std::string xmf = read_text(path + ".xmf");
    t.check(xmf.find("Dimensions=\"7 10 13\" NumberType=\"Float\" Precision=\"8\" Format=\"Binary\" "
                     "Endian=\"Little\">w.raw</DataItem>") != std::string::npos,
            "the XDMF file points at the raw file: " + xmf);
  } else {
    for (int i = 0; i < 3; ++i) t.check(true, "");  // the same number of collective checks
  }
  std::vector<std::pair<int, std::array<int, 3>>> readers = {{1, {1, 1, 1}}};
  if (g_size >= 2) readers.insert(readers.end(), {{2, {2, 1, 1}}, {2, {1, 2, 1}}});
  if (g_size >= 3) readers.insert(readers.end(), {{g_size, {g_size, 1, 1}}, {g_size, {1, g_size, 1}}});
  if (g_size == 4) readers.insert(readers.end(), {{4, {2, 2, 1}}, {4, {1, 2, 2}}});
  for (const auto& [count, procs] : readers) {
    MPI_Comm_split(MPI_COMM_WORLD, g_rank < count ? 0 : MPI_UNDEFINED, g_rank, &sub);
    std::string miss;
    if (sub != MPI_COMM_NULL) {
      auto d = make_domain(sub, kGrid, 1, procs);
      Field u = d->make_field();
      fill(*d, u, 0.25);  // stale values that the read must replace
      for (int k = 0; k < d->local().size[2]; ++k)  // ... own points only: the halo keeps the mark
        for (int j = 0; j < d->local().size[1]; ++j)
          for (int i = 0; i < d->local().size[0]; ++i) u.at(i, j, k) = 0.125;
      read_field(*d, u, path);
      miss = compare(*d, u);
      MPI_Comm_free(&sub);
    }
    t.check(miss.empty(), "written on " + std::to_string(writers) + " ranks, read on " + std::to_string(count) +
                              " as " + std::to_string(procs[0]) + "x" + std::to_string(procs[1]) + "x" +
                              std::to_string(procs[2]) + ": " + miss);
  }
  // An overwrite by every rank, read back; no temporary file is left.
  auto d = make_domain(MPI_COMM_WORLD, kGrid, 1);
  Field u = d->make_field();
  fill(*d, u, 1.0);
  write_field(*d, u, path, "u");
  Field v = d->make_field();
  fill(*d, v);
  read_field(*d, v, path);
  t.check(compare(*d, v, 1.0).empty(), "an overwritten file reads back the new field: " + compare(*d, v, 1.0));
  int left = 0;
  if (DIR* dp = opendir(dir.c_str())) {
    while (dirent* e = readdir(dp)) left += std::strstr(e->d_name, ".tmp") != nullptr;
    closedir(dp);
  }
  t.check(left == 0, std::to_string(left) + " temporary files left in " + dir);
}

void bad_input(Tally& t, const std::string& dir) {
  const std::string good = dir + "/w.raw";
  auto other = make_domain(MPI_COMM_WORLD, {12, 10, 7}, 1);
  Field o = other->make_field();
  expect_error<UsageError>(t, "a file of another grid", "w.raw holds a 13x10x7 grid (" + good +
                           ".json), the domain's is 12x10x7", [&] { read_field(*other, o, good); });
  // Without a sidecar the size decides: a short file is refused, a whole one read.
  const std::string bare = dir + "/bare.raw";
  if (g_rank == 0) {
    const std::string bytes = read_text(good);
    std::ofstream(bare, std::ios::binary).write(bytes.data(), 100);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  auto d = make_domain(MPI_COMM_WORLD, kGrid, 1);
  Field u = d->make_field();
  expect_error<UsageError>(t, "a short file without sidecar",
                           "bare.raw has 100 bytes, a 13x10x7 grid of float64 has 7280 (no sidecar",
                           [&] { read_field(*d, u, bare); });
  // A sidecar of the wrong types is refused like any other (no exception
  // left on rank 0 alone, no hang).
  if (g_rank == 0) {
    const std::string bytes = read_text(good);
    std::ofstream(dir + "/typed.raw", std::ios::binary).write(bytes.data(), static_cast<long>(bytes.size()));
    std::ofstream(dir + "/typed.raw.json") << R"({"grid": [13, 10, 7], "dtype": 8, "order": "i-fastest"})";
    std::ofstream(dir + "/grid.raw.json") << R"({"grid": [13, 10, 1e99]})";
    std::ofstream(dir + "/grid.raw", std::ios::binary).write(bytes.data(), static_cast<long>(bytes.size()));
    mkfifo((dir + "/fifo.raw").c_str(), 0600);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  expect_error<UsageError>(t, "a sidecar's dtype of another type", "typed.raw.json: the data are not",
                           [&] { read_field(*d, u, dir + "/typed.raw"); });
  expect_error<UsageError>(t, "a sidecar's grid of another type", "grid.raw.json: no \"grid\" of three whole",
                           [&] { read_field(*d, u, dir + "/grid.raw"); });
  expect_error<UsageError>(t, "a missing file", "cannot read " + dir + "/missing.raw: No such file or directory",
                           [&] { read_field(*d, u, dir + "/missing.raw"); });
  expect_error<UsageError>(t, "a directory", "is a directory", [&] { read_field(*d, u, dir); });
  fill(*d, u);
  expect_error<OutputError>(t, "no such directory", "cannot write /nonexistent-dir/u.raw",
                            [&] { write_field(*d, u, "/nonexistent-dir/u.raw", "u"); });
  expect_error<OutputError>(t, "a directory as the file", "cannot write " + dir + ": ",
                            [&] { write_field(*d, u, dir, "u"); });
  expect_error<OutputError>(t, "a FIFO as the file", "fifo.raw: not a regular file",
                            [&] { write_field(*d, u, dir + "/fifo.raw", "u"); });
  expect_error<UsageError>(t, "a field of another domain", "(a field of another domain?)",
                           [&] { write_field(*d, o, dir + "/o.raw", "o"); });
  expect_error<UsageError>(t, "a field of another domain (gather)", "gather_field: the field on rank",
                           [&] { gather_field(*d, o, nullptr, 0); });
  expect_error<UsageError>(t, "a bad root", "root " + std::to_string(g_size) + " is out of range: accepted 0 .. " +
                           std::to_string(g_size - 1), [&] { gather_field(*d, u, nullptr, g_size); });
  expect_error<UsageError>(t, "a null global array", "the global array on the root (rank 0) is null",
                           [&] { scatter_field(*d, nullptr, u, 0); });
  expect_error<UsageError>(t, "a bad name", "the field's name 'a b' is not",
                           [&] { write_field(*d, u, dir + "/n.raw", "a b"); });
  expect_error<UsageError>(t, "no path", "a field file needs a path", [&] { read_field(*d, u, "-"); });
  int exists = 0;
  if (g_rank == 0) exists = access((dir + "/o.raw").c_str(), F_OK) == 0 || access((dir + "/n.raw").c_str(), F_OK) == 0;
  t.check(!exists, "a refused write leaves no file");
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  Tally t;
  // One scratch directory (rank 0 makes it), removed at the end.
  std::string dir(256, '\0');
  if (g_rank == 0) {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/hympi_field_io.XXXXXX";
    dir = mkdtemp(&pattern[0]) ? pattern : "";
    dir.resize(256, '\0');
  }
  MPI_Bcast(&dir[0], 256, MPI_CHAR, 0, MPI_COMM_WORLD);
  dir = dir.c_str();
  t.check(!dir.empty(), "a scratch directory");
  try {
    gather_and_scatter(t);
    across_rank_counts(t, dir);
    bad_input(t, dir);
  } catch (const std::exception& e) {
    std::printf("FAIL rank %d: unexpected exception: %s\n", g_rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 0) {
    for (const char* f : {"w.raw", "w.raw.json", "w.raw.xmf", "bare.raw", "typed.raw", "typed.raw.json",
                          "grid.raw", "grid.raw.json", "fifo.raw"}) std::remove((dir + "/" + f).c_str());
    rmdir(dir.c_str());
    std::printf("%d passed, %d failed\n", t.passed, t.failed);
  }
  MPI_Finalize();
  return t.failed ? 1 : 0;
}
