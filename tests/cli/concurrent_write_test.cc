// Concurrent writers of one layout file (issue 11): 8 `select --out` of the same path at once,
// each for another context so that their files differ. After every round the file must parse and
// equal exactly one writer's output, and no temporary file may be left beside it.
// scripts/check-concurrent-writes runs the same check for 20 rounds; here 3 keep ctest short.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "explorer/layout_file.h"
#include "tests/temp_dir.h"

namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int sh(const std::string& cmd) {
  int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

constexpr int kWriters = 8;
constexpr int kRounds = 3;

std::string select_cmd(int writer, const std::string& out) {
  return std::string(LAYOUTX_BIN) + " select --no-fidelity --ctx " + std::to_string(1024 + 512 * writer) + " --out '" +
         out + "' >/dev/null 2>&1";
}

TEST(ConcurrentWrites, EightWritersOfOneLayoutFileLeaveOneWholeFile) {
  layoutx::test::TempDir dir("concurrent");
  // Each writer's output, written alone.
  std::vector<std::string> expected;
  for (int w = 0; w < kWriters; ++w) {
    const std::string ref = dir / ("ref" + std::to_string(w) + ".yaml");
    ASSERT_EQ(sh(select_cmd(w, ref)), 0) << select_cmd(w, ref);
    expected.push_back(slurp(ref));
  }
  fs::create_directories(dir.path() / "race");
  const std::string target = (dir.path() / "race" / "L.yaml").string();
  for (int round = 0; round < kRounds; ++round) {
    std::string all;
    for (int w = 0; w < kWriters; ++w) all += select_cmd(w, target) + " & ";
    ASSERT_EQ(sh("(" + all + "wait) 2>/dev/null; exit 0"), 0);
    const std::string got = slurp(target);
    int matches = 0;
    for (const auto& e : expected) matches += got == e;
    EXPECT_EQ(matches, 1) << "round " << round << ": the file equals no single writer's output";
    EXPECT_NO_THROW(layoutx::explorer::read_layout_file(target)) << "round " << round;
    int entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path() / "race")) ++entries;
    EXPECT_EQ(entries, 1) << "round " << round << ": a temporary file was left beside the target";
  }
}

}  // namespace
