// The gates' database open: an existing database only, read-only (mode=ro), journal mode
// untouched, nothing written; works on a read-only file in a read-only folder.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "db/ingest.h"
#include "db/schema.h"
#include "support/error.h"
#include "tests/db/db_test_util.h"

namespace layoutx::db {
namespace {

using ::testing::HasSubstr;

std::string bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ReadOnlyOpen, AMissingDatabaseIsAnErrorAndIsNotCreated) {
  const std::string path = test::temp_path("sub/none.db");
  for (auto open : {&open_database_readonly, &open_existing_database}) {
    try {
      open(path, 100);
      ADD_FAILURE() << "opened a missing database";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("none.db: no such database (only `layoutx ingest` creates one"));
    }
    EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(path).parent_path()));
  }
}

TEST(ReadOnlyOpen, DoesNotChangeTheJournalModeOrWrite) {
  // A database in rollback-journal mode (as another tool may have left it).
  const std::string path = test::temp_path("x.db");
  {
    Connection c(path);
    c.exec(schema_v1_sql());
  }
  {
    auto c = open_database(path);  // migrates to the current version (and sets WAL) ...
    c->exec("PRAGMA journal_mode = DELETE");  // ... which this test undoes
  }
  const std::string before = bytes(path);
  auto c = open_database_readonly(path);
  auto j = c->prepare("PRAGMA journal_mode");
  ASSERT_TRUE(j.step());
  EXPECT_EQ(j.text(0), "delete");
  EXPECT_THROW(c->exec("INSERT INTO devices (name) VALUES ('x')"), Error);
  c.reset();
  EXPECT_EQ(bytes(path), before);
}

TEST(ReadOnlyOpen, WorksOnAReadOnlyFileAndFolder) {
  const std::string path = test::temp_path("x.db");
  {
    auto c = open_database(path);
    IngestContext ctx;
    ctx.device = "galaxy-s25";
    ingest_text(*c, "layer,ctx,variant,precision,ms\nsliding,4096,roll,fp16,1.7\n", "a.csv", ctx);
  }
  const auto dir = std::filesystem::path(path).parent_path();
  chmod(path.c_str(), 0444);
  chmod(dir.c_str(), 0555);
  const std::string before = bytes(path);
  {
    auto c = open_database_readonly(path);
    EXPECT_EQ(test::rows(*c, "layer_measurements"), 1);
  }
  EXPECT_EQ(bytes(path), before);
  chmod(dir.c_str(), 0755);
  std::filesystem::remove_all(dir);
}

TEST(ReadOnlyOpen, RefusesAnOlderSchemaItCannotMigrate) {
  const std::string path = test::temp_path("v1.db");
  {
    Connection c(path);
    c.exec(schema_v1_sql());
  }
  try {
    open_database_readonly(path);
    ADD_FAILURE() << "opened a v1 database read-only";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(std::string("schema version 1, this layoutx reads version " + std::to_string(kSchemaVersion) + " (any `layoutx ingest` into it migrates it)")));
  }
}

}  // namespace
}  // namespace layoutx::db
