// write_field and read_field (hympi/field_io.hpp): every rank writes (reads)
// its own box of the file at once with MPI-IO, collectively
// (MPI_File_write_all / read_all), through a subarray of the global grid as
// the file view and a subarray of its halo'd array as the memory type (no
// packing copy). Rank 0 alone checks paths and the sidecar, renames the
// finished file into place and writes the sidecar and the XDMF file; every
// step's outcome is agreed (detail::agree) before the next collective one.
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "hympi/build_info.hpp"
#include "hympi/field_io.hpp"
#include "hympi/output_file.hpp"
#include "domain_impl.hpp"  // detail::broadcast_text
#include "field_io_support.hpp"

namespace hympi {

namespace {

using detail::Fault;

// The files are little-endian whatever the host; MPI-IO's "native"
// representation is the host's, so a big-endian host is refused.
constexpr bool kLittleEndianHost = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

std::string grid_text(const std::array<int, 3>& n) {
  return std::to_string(n[0]) + "x" + std::to_string(n[1]) + "x" + std::to_string(n[2]);
}

long long grid_bytes(const std::array<int, 3>& n) {
  return 8LL * n[0] * n[1] * n[2];
}

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string name_problem(const std::string& name) {
  bool ok = !name.empty() && name.size() <= 64;
  for (char c : name)
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.');
  return ok ? "" : "the field's name '" + name + "' is not 1 to 64 letters, digits, '_', '-' or '.'";
}

// Problems with the arguments every rank checks alike (the field: its own).
std::string argument_problem(const Domain& domain, const Field& field, const std::string& path) {
  if (!kLittleEndianHost)
    return "field files are little-endian float64 and this host is big-endian (not supported)";
  if (path.empty() || path == "-") return "a field file needs a path (not '' or '-')";
  return detail::field_problem(domain, field);
}

std::string xml_escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string sidecar_text(const Domain& domain, const std::string& path, const std::string& name) {
  const std::array<int, 3>& n = domain.local().global;
  int ranks = 1;
  HYMPI_CHECK_MPI(MPI_Comm_size(domain.comm(), &ranks));
  const nlohmann::json doc = {
      {"hympi_field_version", kFieldFileVersion},
      {"name", name},
      {"grid", n},
      {"dtype", "<f8"},
      {"order", "i-fastest"},
      {"numpy_shape", {n[2], n[1], n[0]}},
      {"data_file", base_name(path)},
      {"bytes", grid_bytes(n)},
      {"hympi_version", kVersion},
      {"writer", {{"ranks", ranks}, {"proc_grid", domain.grid().dims}}}};
  return doc.dump(2) + "\n";
}

// XDMF 2 (ParaView's and VisIt's readers): the points of the grid at their
// global indices, the field a node-centred scalar in the raw file beside it.
std::string xdmf_text(const std::array<int, 3>& n, const std::string& path, const std::string& name) {
  const std::string dims =
      std::to_string(n[2]) + " " + std::to_string(n[1]) + " " + std::to_string(n[0]);
  return "<?xml version=\"1.0\" ?>\n"
         "<Xdmf Version=\"2.0\">\n"
         "  <Domain>\n"
         "    <Grid Name=\"" + name + "\" GridType=\"Uniform\">\n"
         "      <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"" + dims + "\"/>\n"
         "      <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n"
         "        <DataItem Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">0 0 0</DataItem>\n"
         "        <DataItem Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">1 1 1</DataItem>\n"
         "      </Geometry>\n"
         "      <Attribute Name=\"" + name + "\" AttributeType=\"Scalar\" Center=\"Node\">\n"
         "        <DataItem Dimensions=\"" + dims + "\" NumberType=\"Float\" Precision=\"8\" "
         "Format=\"Binary\" Endian=\"Little\">" + xml_escaped(base_name(path)) + "</DataItem>\n"
         "      </Attribute>\n"
         "    </Grid>\n"
         "  </Domain>\n"
         "</Xdmf>\n";
}

// An MPI file opened collectively, closed (collectively) on every path:
// errors are agreed after each step, so every rank takes the same path.
class OwnedFile {
 public:
  OwnedFile() = default;
  ~OwnedFile() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (file_ != MPI_FILE_NULL && !finalized) MPI_File_close(&file_);
  }
  OwnedFile(const OwnedFile&) = delete;
  OwnedFile& operator=(const OwnedFile&) = delete;
  MPI_File* address() { return &file_; }
  MPI_File get() const { return file_; }
  int close() { return file_ == MPI_FILE_NULL ? MPI_SUCCESS : MPI_File_close(&file_); }

 private:
  MPI_File file_ = MPI_FILE_NULL;
};

// Rank 0's temporary file: removed unless renamed into place.
class Temporary {
 public:
  ~Temporary() {
    if (!name.empty()) ::unlink(name.c_str());
  }
  std::string name;
};

// The agreed outcome of an MPI call made by every rank: "`what`: call: text".
void agree_mpi(MPI_Comm comm, int rc, const std::string& what, const char* call, Fault fault) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  detail::agree(comm, rc == MPI_SUCCESS ? Fault::None : fault,
                rc == MPI_SUCCESS ? "" : what + ": " + call + " failed on rank " +
                                             std::to_string(rank) + ": " + detail::mpi_text(rc));
}

// Collective: the own points of `field` to or from the open file, through
// the file view of this rank's box. What: "cannot write PATH" or "cannot
// read PATH", for the messages.
void transfer(Domain& domain, MPI_File file, const Field& field, bool write, const std::string& what,
              Fault fault) {
  const MPI_Comm comm = domain.comm();
  const LocalDomain& local = domain.local();
  detail::OwnedType memory, view;
  detail::make_memory_type(field, memory);
  detail::make_global_type(local.global, local.offset, local.size, view);
  agree_mpi(comm, MPI_File_set_view(file, 0, MPI_DOUBLE, view.get(), "native", MPI_INFO_NULL),
            what, "MPI_File_set_view", fault);
  MPI_Status status;
  double* data = const_cast<double*>(field.data());  // read: the caller's Field is not const
  const int rc = write ? MPI_File_write_all(file, data, 1, memory.get(), &status)
                       : MPI_File_read_all(file, data, 1, memory.get(), &status);
  agree_mpi(comm, rc, what, write ? "MPI_File_write_all" : "MPI_File_read_all", fault);
  // A short transfer (a file that shrank since rank 0 checked it) is an error.
  MPI_Count done = 0;
  HYMPI_CHECK_MPI(MPI_Get_elements_x(&status, MPI_DOUBLE, &done));
  const long long points = 1LL * local.size[0] * local.size[1] * local.size[2];
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  detail::agree(comm, done == points ? Fault::None : fault,
                done == points ? "" : what + ": rank " + std::to_string(rank) + " transferred " +
                                          std::to_string(done) + " of its " +
                                          std::to_string(points) + " points");
}

// Rank 0's part of a collective step, whose outcome the others wait for:
// any exception (a sidecar of the wrong types, no memory) becomes its
// message, so that it is agreed instead of leaving the other ranks waiting.
template <typename Step>
std::string on_rank0(const std::string& what, Step&& step) {
  try {
    return step();
  } catch (const std::exception& e) {
    return what + ": " + e.what();
  }
}

// Rank 0: the checks before a write and the temporary file ("" or the reason).
std::string prepare_write(const std::string& path, Temporary& tmp) {
  for (const std::string& p : {path, path + ".json", path + ".xmf"})
    if (const std::string why = check_writable_path(p); !why.empty()) return "cannot write " + p + ": " + why;
  // The finished file is renamed over the target: never over a device or
  // FIFO (/dev/null), which write_text_file would write in place.
  struct stat st {};
  if (::stat(resolve_links(path).c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return "cannot write " + path + ": not a regular file";
  tmp.name = create_temporary_file(resolve_links(path));
  if (tmp.name.empty()) return "cannot write " + path + ": " + std::strerror(errno);
  return "";
}

// Rank 0: the complete data file under its name (the mode of the file it
// replaces, else the umask's default), then the sidecar and XDMF file.
std::string finish_write(const Domain& domain, const std::string& path, const std::string& name,
                         Temporary& tmp) {
  const std::string target = resolve_links(path);
  struct stat st {};
  const mode_t mode = ::stat(target.c_str(), &st) == 0 ? (st.st_mode & 07777)
                                                       : static_cast<mode_t>(new_file_mode());
  if (::chmod(tmp.name.c_str(), mode) != 0 || ::rename(tmp.name.c_str(), target.c_str()) != 0)
    return "cannot write " + path + ": " + std::strerror(errno);
  tmp.name.clear();  // renamed: nothing to remove
  std::string error = write_text_file(path + ".json", sidecar_text(domain, path, name));
  if (error.empty()) error = write_text_file(path + ".xmf", xdmf_text(domain.local().global, path, name));
  return error;
}

// Rank 0: whether `path` holds a field of `grid` ("" or the reason).
std::string check_readable(const std::string& path, const std::array<int, 3>& grid) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "cannot read " + path + ": " + std::strerror(errno);
  if (S_ISDIR(st.st_mode)) return "cannot read " + path + ": is a directory";
  const std::string sidecar = path + ".json";
  std::ifstream in(sidecar);
  if (in) {
    nlohmann::json doc;
    try {
      doc = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      return sidecar + ": not a valid JSON document (" + e.what() + ")";
    }
    const nlohmann::json g = doc.is_object() && doc.contains("grid") ? doc["grid"] : nlohmann::json();
    const auto whole = [](const nlohmann::json& v) {
      return v.is_number_integer() && v.get<long long>() >= 1 && v.get<long long>() <= 1LL << 30;
    };
    if (!g.is_array() || g.size() != 3 || !whole(g[0]) || !whole(g[1]) || !whole(g[2]))
      return sidecar + ": no \"grid\" of three whole numbers >= 1 (not a hympi field sidecar)";
    if (doc.value("dtype", nlohmann::json()) != "<f8" || doc.value("order", nlohmann::json()) != "i-fastest")
      return sidecar + ": the data are not \"dtype\": \"<f8\", \"order\": \"i-fastest\"";
    const std::array<int, 3> file_grid{g[0].get<int>(), g[1].get<int>(), g[2].get<int>()};
    if (file_grid != grid)
      return path + " holds a " + grid_text(file_grid) + " grid (" + sidecar + "), the domain's is " +
             grid_text(grid);
  }
  const long long want = grid_bytes(grid);
  if (st.st_size != want)
    return path + " has " + std::to_string(st.st_size) + " bytes, a " + grid_text(grid) +
           " grid of float64 has " + std::to_string(want) +
           (in ? " (the file is incomplete or not the one its sidecar describes)" : " (no sidecar " + sidecar + ")");
  return "";
}

}  // namespace

void write_field(Domain& domain, const Field& field, const std::string& path,
                 const std::string& name) {
  const MPI_Comm comm = domain.comm();
  int rank = 0;
  HYMPI_CHECK_MPI(MPI_Comm_rank(comm, &rank));
  std::string problem = argument_problem(domain, field, path);
  if (problem.empty()) problem = name_problem(name);
  detail::agree(comm, problem.empty() ? Fault::None : Fault::Usage,
                problem.empty() ? "" : "write_field: " + problem);

  Temporary tmp;
  std::string error;
  if (rank == 0) error = on_rank0("cannot write " + path, [&] { return prepare_write(path, tmp); });
  detail::agree(comm, error.empty() ? Fault::None : Fault::Output, error);
  std::string tmp_name = tmp.name;
  detail::broadcast_text(tmp_name, comm);

  const std::string what = "cannot write " + path;
  {
    OwnedFile file;
    agree_mpi(comm, MPI_File_open(comm, tmp_name.c_str(), MPI_MODE_WRONLY, MPI_INFO_NULL, file.address()),
              what, "MPI_File_open", Fault::Output);
    HYMPI_CHECK_MPI(MPI_File_set_errhandler(file.get(), MPI_ERRORS_RETURN));
    transfer(domain, file.get(), field, true, what, Fault::Output);
    agree_mpi(comm, MPI_File_sync(file.get()), what, "MPI_File_sync", Fault::Output);
    agree_mpi(comm, file.close(), what, "MPI_File_close", Fault::Output);
  }
  if (rank == 0)
    error = on_rank0("cannot write " + path, [&] { return finish_write(domain, path, name, tmp); });
  detail::agree(comm, error.empty() ? Fault::None : Fault::Output, error);
}

void read_field(Domain& domain, Field& field, const std::string& path) {
  const MPI_Comm comm = domain.comm();
  int rank = 0;
  HYMPI_CHECK_MPI(MPI_Comm_rank(comm, &rank));
  const std::string problem = argument_problem(domain, field, path);
  detail::agree(comm, problem.empty() ? Fault::None : Fault::Usage,
                problem.empty() ? "" : "read_field: " + problem);
  std::string error;
  if (rank == 0)
    error = on_rank0("cannot read " + path, [&] { return check_readable(path, domain.local().global); });
  detail::agree(comm, error.empty() ? Fault::None : Fault::Usage, error);

  const std::string what = "cannot read " + path;
  OwnedFile file;
  agree_mpi(comm, MPI_File_open(comm, path.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, file.address()),
            what, "MPI_File_open", Fault::Usage);
  HYMPI_CHECK_MPI(MPI_File_set_errhandler(file.get(), MPI_ERRORS_RETURN));
  transfer(domain, file.get(), field, false, what, Fault::Usage);
  agree_mpi(comm, file.close(), what, "MPI_File_close", Fault::Usage);
}

}  // namespace hympi
