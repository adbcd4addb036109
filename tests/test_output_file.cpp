// hympi::write_text_file, the writer of every result file (--json, --trace,
// Domain::write_report): its temporary file never follows a link, the file
// replaced keeps its mode, a failure leaves nothing, and check_writable_path
// (the check before a run) predicts the failures it can.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <dirent.h>

#include "hympi/output_file.hpp"

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char name[] = "/tmp/hympi-output-XXXXXX";
    path = ::mkdtemp(name);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string operator/(const std::string& name) const { return path + "/" + name; }
  std::set<std::string> names() const {
    std::set<std::string> out;
    DIR* d = ::opendir(path.c_str());
    while (dirent* e = ::readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.insert(e->d_name);
    ::closedir(d);
    return out;
  }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

mode_t mode_of(const std::string& path) {
  struct stat st {};
  ::stat(path.c_str(), &st);
  return st.st_mode & 07777;
}

TEST(OutputFile, AReplacedFileKeepsItsMode) {
  TempDir dir;
  const std::string target = dir / "private.json";
  std::ofstream(target) << "earlier";
  ::chmod(target.c_str(), 0600);
  ASSERT_EQ(hympi::write_text_file(target, "{}\n"), "");
  EXPECT_EQ(mode_of(target), 0600u);
  EXPECT_EQ(slurp(target), "{}\n");
  EXPECT_EQ(dir.names(), std::set<std::string>{"private.json"});
}

TEST(OutputFile, ANewFileGetsTheUmaskDefault) {
  TempDir dir;
  const mode_t old = ::umask(027);
  const std::string error = hympi::write_text_file(dir / "new.json", "{}\n");
  ::umask(old);
  ASSERT_EQ(error, "");
  EXPECT_EQ(mode_of(dir / "new.json"), 0640u);  // not mkstemp's 0600
}

TEST(OutputFile, ALinkAtThePredictableTemporaryNameIsNotFollowed) {
  // The name the writer used before (target + ".tmp" + pid) and target + ".tmp":
  // a link planted there pointing at a victim must not be written through.
  TempDir dir;
  const std::string victim = dir / "victim";
  std::ofstream(victim) << "precious";
  const std::string target = dir / "out.json";
  for (const std::string& name : {target + ".tmp" + std::to_string(::getpid()), target + ".tmp"})
    ASSERT_EQ(::symlink(victim.c_str(), name.c_str()), 0);
  ASSERT_EQ(hympi::write_text_file(target, "{\"ok\": 1}\n"), "");
  EXPECT_EQ(slurp(victim), "precious");
  EXPECT_EQ(slurp(target), "{\"ok\": 1}\n");
  EXPECT_EQ(dir.names().size(), 4u);  // victim, out.json and the two links: no temporary left
}

TEST(OutputFile, TemporaryNamesAreUnpredictable) {
  // Many links planted at names of the temporary's pattern do not stop or
  // divert the write: mkstemps tries other names.
  TempDir dir;
  const std::string victim = dir / "victim";
  std::ofstream(victim) << "precious";
  for (int i = 0; i < 50; ++i) {
    const std::string name = dir / (".out.json." + std::to_string(100000 + i) + ".tmp");
    ASSERT_EQ(::symlink(victim.c_str(), name.c_str()), 0);
  }
  for (int i = 0; i < 5; ++i) ASSERT_EQ(hympi::write_text_file(dir / "out.json", "x\n"), "");
  EXPECT_EQ(slurp(victim), "precious");
  EXPECT_EQ(dir.names().size(), 52u);
}

TEST(OutputFile, ADirectoryGivenAsAFileIsRefusedBeforeAndAtTheWrite) {
  TempDir dir;
  ::mkdir((dir / "d.json").c_str(), 0755);
  EXPECT_EQ(hympi::check_writable_path(dir / "d.json"), "is a directory");
  EXPECT_EQ(hympi::write_text_file(dir / "d.json", "{}\n"), "cannot write " + (dir / "d.json") + ": Is a directory");
  EXPECT_EQ(dir.names(), std::set<std::string>{"d.json"});
}

TEST(OutputFile, AFileGivenAsADirectoryIsRefusedBeforeAndAtTheWrite) {
  TempDir dir;
  std::ofstream(dir / "f") << "x";
  const std::string path = dir / "f/out.json";
  EXPECT_NE(hympi::check_writable_path(path).find("is not a directory"), std::string::npos)
      << hympi::check_writable_path(path);
  EXPECT_EQ(hympi::write_text_file(path, "{}\n"), "cannot write " + path + ": Not a directory");
  EXPECT_EQ(dir.names(), std::set<std::string>{"f"});
}

TEST(OutputFile, TheCheckBeforeARunLeavesNothing) {
  TempDir dir;
  EXPECT_EQ(hympi::check_writable_path(dir / "new.json"), "");
  EXPECT_TRUE(dir.names().empty());
  EXPECT_NE(hympi::check_writable_path(dir / "no/such/dir.json").find("no directory"), std::string::npos);
}

}  // namespace
