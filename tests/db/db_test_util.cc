#include "tests/db/db_test_util.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>

namespace layoutx::db::test {

std::string temp_path(const std::string& file) {
  static std::atomic<int> n{0};
  auto dir = std::filesystem::temp_directory_path() /
             ("layoutx_db_test_" + std::to_string(getpid()) + "_" + std::to_string(n++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return (dir / file).string();
}

std::string dump(Connection& c) {
  std::string out;
  auto tables = c.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  while (tables.step()) {
    std::string t = tables.text(0);
    out += "== " + t + "\n";
    auto rows = c.prepare("SELECT * FROM " + t + " ORDER BY rowid");
    while (rows.step()) {
      for (int i = 0; i < rows.columns(); ++i) out += "|" + (rows.is_null(i) ? std::string("NULL") : rows.text(i));
      out += "\n";
    }
  }
  return out;
}

std::string fixture(const std::string& name) { return std::string(LAYOUTX_TEST_DIR) + "/fixtures/profiles/" + name; }

int64_t rows(Connection& c, const std::string& table) {
  auto s = c.prepare("SELECT count(*) FROM " + table);
  s.step();
  return s.int64(0);
}

}  // namespace layoutx::db::test
