// The one output-target rule (support/output_target.h) and the writers built on it
// (support/atomic_file.h): a device node or FIFO is refused and survives, a symbolic link is
// written through, an empty path names its flag, a missing folder is not created, a folder is
// published whole or not at all.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/atomic_file.h"
#include "support/error.h"
#include "tests/temp_dir.h"

namespace layoutx {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The message of the Error `f` throws ("" if it throws none).
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

mode_t type_of(const fs::path& p) {
  struct stat st {};
  ::lstat(p.c_str(), &st);
  return st.st_mode & S_IFMT;
}

TEST(OutputTarget, ACharacterDeviceIsRefusedAndSurvives) {
  if (::geteuid() != 0) GTEST_SKIP() << "mknod of a character device needs root (CI runs as root)";
  TempDir dir("output-target");
  const fs::path node = dir.path() / "null";
  ASSERT_EQ(::mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);  // what /dev/null is
  EXPECT_NE(error_of([&] { check_file_target(node, "--out"); }).find("--out: " + node.string() + ": is a character device, not a regular file"),
            std::string::npos);
  EXPECT_NE(error_of([&] { write_file_atomically(node, "x"); }).find("is a character device"), std::string::npos);
  EXPECT_NE(error_of([&] { StagedFolder f(node, true, "--out"); }).find("is a character device, not a folder"), std::string::npos);
  EXPECT_EQ(type_of(node), S_IFCHR);
}

TEST(OutputTarget, AFifoIsRefusedAndSurvives) {
  TempDir dir("output-target");
  const fs::path fifo = dir.path() / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
  EXPECT_NE(error_of([&] { write_file_atomically(fifo, "x"); }).find(fifo.string() + ": is a FIFO (named pipe), not a regular file"),
            std::string::npos);
  EXPECT_EQ(type_of(fifo), S_IFIFO);
  // A symbolic link to it is refused the same way (the link's target is what would be replaced).
  const fs::path link = dir.path() / "link";
  fs::create_symlink(fifo, link);
  EXPECT_NE(error_of([&] { write_file_atomically(link, "x"); }).find("is a FIFO"), std::string::npos);
  EXPECT_EQ(type_of(link), S_IFLNK);
  EXPECT_EQ(type_of(fifo), S_IFIFO);
}

TEST(OutputTarget, ASymbolicLinkIsWrittenThrough) {
  TempDir dir("output-target");
  fs::create_directories(dir.path() / "exporter");
  const fs::path real = dir.path() / "layout.yaml", link = dir.path() / "exporter" / "layout.yaml";
  std::ofstream(real) << "old";
  fs::create_symlink(real, link);
  EXPECT_EQ(check_file_target(link), fs::canonical(real));
  write_file_atomically(link, "new");
  EXPECT_EQ(type_of(link), S_IFLNK);
  EXPECT_EQ(fs::read_symlink(link), real);
  EXPECT_EQ(slurp(real), "new");
  // A dangling link (relative, through a chain of two): writing creates its target.
  const fs::path first = dir.path() / "first", second = dir.path() / "second";
  fs::create_symlink("second", first);
  fs::create_symlink("made.yaml", second);
  write_file_atomically(first, "made");
  EXPECT_EQ(type_of(first), S_IFLNK);
  EXPECT_EQ(type_of(second), S_IFLNK);
  EXPECT_EQ(slurp(dir.path() / "made.yaml"), "made");
}

TEST(OutputTarget, AnEmptyPathNamesTheFlag) {
  EXPECT_EQ(error_of([] { check_file_target("", "--out"); }), "--out: the path is empty; give a file name");
  EXPECT_EQ(error_of([] { check_folder_target("", false, "--html"); }), "--html: the path is empty; give a folder");
}

TEST(OutputTarget, AMissingFolderIsNotCreated) {
  TempDir dir("output-target");
  const fs::path target = dir.path() / "missing" / "x.db";
  EXPECT_NE(error_of([&] { check_file_target(target, "--db"); }).find("folder " + (dir.path() / "missing").string() + " does not exist"),
            std::string::npos);
  EXPECT_NE(error_of([&] { StagedFolder f(dir.path() / "missing" / "out"); }).find("does not exist"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.path() / "missing"));
}

TEST(StagedFolderTest, ANonEmptyFolderIsRefusedUnlessReplaced) {
  TempDir dir("output-target");
  const fs::path out = dir.path() / "out";
  fs::create_directories(out);
  std::ofstream(out / "old.txt") << "old";
  EXPECT_NE(error_of([&] { StagedFolder f(out, false, "--out"); }).find("--out: " + out.string() + ": folder exists and is not empty (give --force"),
            std::string::npos);
  {
    StagedFolder f(out, /*replace=*/true);
    std::ofstream(f.path() / "new.txt") << "new";
    f.publish();
  }
  EXPECT_FALSE(fs::exists(out / "old.txt"));
  EXPECT_EQ(slurp(out / "new.txt"), "new");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1) << "only out/ is left";
}

TEST(StagedFolderTest, AFolderGivenUpLeavesNothing) {
  TempDir dir("output-target");
  {
    StagedFolder f(dir.path() / "out");
    std::ofstream(f.path() / "half.onnx") << "half";
  }
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(StagedFolderTest, ASymbolicLinkToAFolderIsWrittenThrough) {
  TempDir dir("output-target");
  fs::create_directories(dir.path() / "real");
  fs::create_symlink("real", dir.path() / "link");
  StagedFolder f(dir.path() / "link");
  std::ofstream(f.path() / "index.html") << "page";
  f.publish();
  EXPECT_EQ(type_of(dir.path() / "link"), S_IFLNK);
  EXPECT_EQ(slurp(dir.path() / "real" / "index.html"), "page");
}

TEST(StagedFolderTest, AStageAKilledRunLeftIsRemovedByTheNext) {
  TempDir dir("output-target");
  const fs::path out = dir.path() / "out";
  // A child stages a folder, writes into it and is killed before it publishes.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    StagedFolder f(out);
    std::ofstream(f.path() / "big.onnx") << "partial";
    ::kill(::getpid(), SIGKILL);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_FALSE(fs::exists(out)) << "nothing at the target";
  ASSERT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1) << "the orphaned stage";
  {
    StagedFolder f(out);
    std::ofstream(f.path() / "done") << "ok";
    f.publish();
  }
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir.path())) left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"out"});
}

}  // namespace
}  // namespace layoutx
