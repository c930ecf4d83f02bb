#include "tests/db/db_test_util.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include "tests/temp_dir.h"

namespace layoutx::db::test {

namespace {

// With LAYOUTX_TEST_PG set (a libpq URI of a server's maintenance database, e.g.
// postgresql://layoutx@/postgres?host=/tmp/sock; tests/db/postgres_suite.sh sets it), every
// "*.db" the tests ask for is a fresh PostgreSQL database on that server instead of a file.
std::string fresh_postgres_database(const std::string& admin_uri) {
  static std::atomic<int> n{0};
  const std::string name = "lx_test_" + std::to_string(getpid()) + "_" + std::to_string(n++);
  Connection admin(admin_uri);
  admin.exec("DROP DATABASE IF EXISTS " + name);
  admin.exec("CREATE DATABASE " + name);
  // Replace the URI's database: postgresql://user@host/DB?params.
  const size_t scheme = admin_uri.find("://") + 3;
  const size_t slash = admin_uri.find('/', scheme);
  const size_t query = admin_uri.find('?', scheme);
  std::string head = slash == std::string::npos || (query != std::string::npos && slash > query)
                         ? admin_uri.substr(0, query == std::string::npos ? admin_uri.size() : query)
                         : admin_uri.substr(0, slash);
  return head + "/" + name + (query == std::string::npos ? "" : admin_uri.substr(query));
}

}  // namespace

bool on_postgres() {
  const char* pg = std::getenv("LAYOUTX_TEST_PG");
  return pg && *pg;
}

std::string temp_path(const std::string& file) {
  if (on_postgres() && file.size() > 3 && file.compare(file.size() - 3, 3, ".db") == 0)
    return fresh_postgres_database(std::getenv("LAYOUTX_TEST_PG"));
  // Unique folders (mkdtemp), every one removed when the test binary exits.
  static std::mutex m;
  static std::vector<std::unique_ptr<layoutx::test::TempDir>> dirs;
  std::lock_guard<std::mutex> lock(m);
  dirs.push_back(std::make_unique<layoutx::test::TempDir>("db-test"));
  return *dirs.back() / file;
}

std::string dump(Connection& c) {
  std::string out;
  auto tables = c.prepare(c.dialect() == Dialect::kSqlite
                              ? "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
                              : "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
                                "ORDER BY table_name");
  while (tables.step()) {
    std::string t = tables.text(0);
    out += "== " + t + "\n";
    auto rows = c.prepare("SELECT * FROM " + t + " ORDER BY 1");  // every table's first column is its id
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
