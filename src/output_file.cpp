#include "hympi/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

namespace hympi {

namespace {

std::string directory_of(const std::string& target) {
  const auto slash = target.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : target.substr(0, slash);
}

std::string base_of(const std::string& target) {
  const auto slash = target.rfind('/');
  return slash == std::string::npos ? target : target.substr(slash + 1);
}

// The process's umask, read without changing it (umask(2) can only be read
// by setting it, which would race with a thread creating a file).
mode_t current_umask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Umask:", 0) == 0) return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8));
  return 022;
}

// A new file, open for writing, beside `target` under an unpredictable name
// (mkstemps: O_CREAT|O_EXCL, so a symbolic link planted at that name is
// never followed; another name is tried). -1 with errno set on failure.
int create_temporary(const std::string& target, std::string& name) {
  const std::string pattern = directory_of(target) + "/." + base_of(target) + ".XXXXXX.tmp";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  const int fd = ::mkstemps(buffer.data(), 4);
  if (fd >= 0) name.assign(buffer.data());
  return fd;
}

bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// The rename itself on disk; best effort (some file systems refuse).
void sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

std::string fail(const std::string& path, int why) {
  return "cannot write " + path + ": " + (why ? std::strerror(why) : "write failed");
}

}  // namespace

std::string resolve_links(std::string path) {
  for (int hop = 0; hop < 40; ++hop) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
    std::string target(4096, '\0');
    const ssize_t n = ::readlink(path.c_str(), &target[0], target.size());
    if (n <= 0) return path;
    target.resize(static_cast<std::size_t>(n));
    if (target[0] != '/') {  // relative to the link's directory
      const auto slash = path.rfind('/');
      if (slash != std::string::npos) target = path.substr(0, slash + 1) + target;
    }
    path = target;
  }
  return path;
}

std::string check_writable_path(const std::string& path) {
  if (path.empty()) return "empty path";
  if (path == "-") return "";
  const std::string target = resolve_links(path);
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return "is a directory";
    if (!S_ISREG(st.st_mode)) {  // a device or FIFO is written in place
      if (::access(target.c_str(), W_OK) != 0)
        return std::string("cannot be opened for writing (") + std::strerror(errno) + ")";
      return "";
    }
  } else if (errno == ENOTDIR) {
    return "cannot be opened for writing (" + directory_of(target) + " is not a directory)";
  }
  const std::string dir = directory_of(target);
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return "cannot be opened for writing (no directory " + dir + ")";
  // The write itself, tried: a temporary file is created and removed, so a
  // read-only file system or missing permission (root included) shows now,
  // not after the run.
  std::string tmp;
  const int fd = create_temporary(target, tmp);
  if (fd < 0) return "cannot be opened for writing (directory " + dir + ": " + std::strerror(errno) + ")";
  ::close(fd);
  ::unlink(tmp.c_str());
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) == 0 && fs.f_bavail == 0)
    return "cannot be written (" + dir + ": " + std::strerror(ENOSPC) + ")";
  return "";
}

std::string write_text_file(const std::string& path, const std::string& text) {
  if (path == "-") {
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
      return std::string("cannot write to stdout: ") + std::strerror(errno);
    return "";
  }
  if (path.empty()) return "cannot write '': empty path";
  const std::string target = resolve_links(path);
  struct stat st {};
  const bool exists = ::stat(target.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) return fail(path, EISDIR);
  if (exists && !S_ISREG(st.st_mode)) {
    // A device or FIFO (/dev/stdout, /dev/full, a named pipe) is written in
    // place: renaming a file over it would replace the device node.
    const int fd = ::open(target.c_str(), O_WRONLY | O_TRUNC);
    if (fd < 0) return fail(path, errno);
    const bool ok = write_all(fd, text);
    const int why = errno;
    ::close(fd);
    return ok ? "" : fail(path, why);
  }
  std::string tmp;
  const int fd = create_temporary(target, tmp);
  if (fd < 0) return fail(path, errno);
  // The mode of the file replaced (a 0600 file stays 0600); a new file the
  // umask's default, as open(2) would give it (mkstemp makes 0600).
  const mode_t mode = exists ? (st.st_mode & 07777) : (0666 & ~current_umask());
  const bool written = ::fchmod(fd, mode) == 0 && write_all(fd, text) && ::fsync(fd) == 0;
  int why = errno;
  const bool closed = ::close(fd) == 0;
  if (written && !closed) why = errno;
  if (!written || !closed || ::rename(tmp.c_str(), target.c_str()) != 0) {
    if (written && closed) why = errno;
    ::unlink(tmp.c_str());
    return fail(path, why);
  }
  sync_directory(directory_of(target));
  return "";
}

std::string create_temporary_file(const std::string& target) {
  std::string name;
  const int fd = create_temporary(target, name);
  if (fd < 0) return "";
  ::close(fd);
  return name;
}

unsigned new_file_mode() { return 0666 & ~current_umask(); }

}  // namespace hympi
