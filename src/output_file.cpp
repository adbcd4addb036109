#include "hympi/output_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace hympi {

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
    if (::access(target.c_str(), W_OK) != 0)
      return std::string("cannot be opened for writing (") + std::strerror(errno) + ")";
    return "";
  }
  const auto slash = target.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : target.substr(0, slash);
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return "cannot be opened for writing (no directory " + dir + ")";
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return "cannot be opened for writing (directory " + dir + ": " + std::strerror(errno) + ")";
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
  // A device or FIFO (/dev/stdout, /dev/full, a named pipe) is written in
  // place: renaming a file over it would replace the device node.
  struct stat st {};
  const bool special = ::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
  const std::string tmp = special ? target : target + ".tmp" + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) return "cannot write " + path + ": " + std::strerror(errno);
  errno = 0;
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size() &&
                       std::fflush(f) == 0 && (special || ::fsync(fileno(f)) == 0);
  const int write_errno = errno;
  const bool closed = std::fclose(f) == 0;
  const int close_errno = errno;
  if (!written || !closed) {
    if (!special) std::remove(tmp.c_str());
    const int why = !written ? write_errno : close_errno;
    return "cannot write " + path + ": " + (why ? std::strerror(why) : "write failed");
  }
  if (!special && std::rename(tmp.c_str(), target.c_str()) != 0) {
    const int why = errno;
    std::remove(tmp.c_str());
    return "cannot write " + path + ": " + std::strerror(why);
  }
  return "";
}

}  // namespace hympi
