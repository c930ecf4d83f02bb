#include "support/disk_memo.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "tests/temp_dir.h"

namespace layoutx {
namespace {

std::string only_file_text(const std::filesystem::path& folder) {
  std::filesystem::directory_iterator it(folder);
  EXPECT_NE(it, std::filesystem::directory_iterator());
  std::ifstream in(it->path());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void rewrite_only_file(const std::filesystem::path& folder, const std::string& text) {
  std::ofstream(std::filesystem::directory_iterator(folder)->path(), std::ios::trunc) << text;
}

TEST(DiskMemo, AValueComesBackToTheSameCodeAndKeyOnly) {
  test::TempDir dir("memo");
  const auto folder = dir.path() / "sub" / "memo";  // created on the first put
  DiskMemo a(folder, "build 1");
  EXPECT_FALSE(a.get("k").has_value());
  a.put("k", "17.968759180320149");
  EXPECT_EQ(DiskMemo(folder, "build 1").get("k"), "17.968759180320149");
  EXPECT_FALSE(DiskMemo(folder, "build 2").get("k").has_value()) << "another build must recompute";
  EXPECT_FALSE(a.get("k2").has_value());
  // A newer build's value replaces the older one's file for the key: one file per key.
  DiskMemo(folder, "build 2").put("k", "3");
  EXPECT_EQ(DiskMemo(folder, "build 2").get("k"), "3");
  EXPECT_FALSE(a.get("k").has_value());
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(folder), std::filesystem::directory_iterator()), 1);
}

TEST(DiskMemo, TornForeignOrCorruptFilesAreMisses) {
  test::TempDir dir("memo");
  DiskMemo m(dir.path(), "build 1");
  m.put("key", "1.5");
  const std::string good = only_file_text(dir.path());
  ASSERT_EQ(m.get("key"), "1.5");
  for (size_t cut = 0; cut < good.size(); ++cut) {  // every truncation, as a crash mid-write would leave
    rewrite_only_file(dir.path(), good.substr(0, cut));
    EXPECT_FALSE(m.get("key").has_value()) << "cut at " << cut;
  }
  std::string other_key = good;
  other_key.replace(other_key.find("\nkey\n"), 5, "\nkez\n");  // a hash collision: another key's file
  rewrite_only_file(dir.path(), other_key);
  EXPECT_FALSE(m.get("key").has_value());
  rewrite_only_file(dir.path(), good);
  EXPECT_EQ(m.get("key"), "1.5");
}

TEST(DiskMemo, OffWithoutAFolderOrAStampAndNeverThrows) {
  test::TempDir dir("memo");
  DiskMemo no_stamp(dir.path(), "");
  EXPECT_FALSE(no_stamp.enabled());
  no_stamp.put("k", "1");
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  DiskMemo none(std::nullopt, "build");
  none.put("k", "1");
  EXPECT_FALSE(none.get("k").has_value());
  DiskMemo m(dir.path(), "build");
  m.put("two\nlines", "1");
  m.put("k", "two\nlines");
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  // A folder that is a file, and (unless root, who writes anyway) a read-only folder.
  std::ofstream(dir.path() / "file") << "x";
  EXPECT_NO_THROW(DiskMemo(dir.path() / "file" / "memo", "build").put("k", "1"));
  std::filesystem::create_directory(dir.path() / "ro");
  ::chmod((dir.path() / "ro").c_str(), 0500);
  EXPECT_NO_THROW(DiskMemo(dir.path() / "ro", "build").put("k", "1"));
  if (::geteuid() != 0) {
    EXPECT_TRUE(std::filesystem::is_empty(dir.path() / "ro"));
  }
}

// Sets an environment variable for one test and restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(DiskMemo, TheCacheFolderFollowsTheEnvironment) {
  {
    ScopedEnv a("LAYOUTX_CACHE_DIR", "/c"), b("XDG_CACHE_HOME", "/x"), c("HOME", "/h");
    EXPECT_EQ(user_cache_folder("fidelity"), std::filesystem::path("/c/fidelity"));
  }
  {
    ScopedEnv a("LAYOUTX_CACHE_DIR", ""), b("XDG_CACHE_HOME", "/x");
    EXPECT_FALSE(user_cache_folder("fidelity").has_value()) << "set but empty turns memos off";
  }
  {
    ScopedEnv a("LAYOUTX_CACHE_DIR", nullptr), b("XDG_CACHE_HOME", "/x");
    EXPECT_EQ(user_cache_folder("fidelity"), std::filesystem::path("/x/layoutx/fidelity"));
  }
  {
    ScopedEnv a("LAYOUTX_CACHE_DIR", nullptr), b("XDG_CACHE_HOME", nullptr), c("HOME", "/h");
    EXPECT_EQ(user_cache_folder("fidelity"), std::filesystem::path("/h/.cache/layoutx/fidelity"));
  }
  {
    ScopedEnv a("LAYOUTX_CACHE_DIR", nullptr), b("XDG_CACHE_HOME", nullptr), c("HOME", nullptr);
    EXPECT_FALSE(user_cache_folder("fidelity").has_value());
  }
}

TEST(DiskMemo, TheCodeStampNamesThisBinary) {
  const std::string s = code_stamp();
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  ASSERT_FALSE(ec);
  EXPECT_EQ(s.rfind(exe.string() + " " + std::to_string(std::filesystem::file_size(exe)) + " ", 0), 0u) << s;
  EXPECT_NE(s.find(" fma "), std::string::npos) << s;
  EXPECT_NE(s.find(" avx2 "), std::string::npos) << s;
  EXPECT_EQ(code_stamp(), s);
}

}  // namespace
}  // namespace layoutx
