#include "tests/db/db_test_util.h"

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include "tests/temp_dir.h"

namespace layoutx::db::test {

std::string temp_path(const std::string& file) {
  // Unique folders (mkdtemp), every one removed when the test binary exits.
  static std::mutex m;
  static std::vector<std::unique_ptr<layoutx::test::TempDir>> dirs;
  std::lock_guard<std::mutex> lock(m);
  dirs.push_back(std::make_unique<layoutx::test::TempDir>("db-test"));
  return *dirs.back() / file;
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
