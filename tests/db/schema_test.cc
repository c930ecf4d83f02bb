#include "db/schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "model/variant.h"
#include "support/error.h"
#include "tests/db/db_test_util.h"

namespace layoutx::db {
namespace {

using ::testing::HasSubstr;

bool has_column(Connection& c, const std::string& table, const std::string& column) {
  auto s = c.prepare("SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2");
  s.bind(1, table).bind(2, column).step();
  return s.int64(0) == 1;
}

TEST(Schema, FreshDatabaseIsCurrentVersionInWalMode) {
  // A given path's folder is not created (only the default database's is): an error naming it.
  try {
    open_database(test::temp_path("sub/dir/layoutx.db"));
    ADD_FAILURE() << "a missing folder was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sub/dir does not exist"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(test::temp_path("sub")));
  auto path = test::temp_path("layoutx.db");
  auto c = open_database(path);
  EXPECT_EQ(schema_version(*c), kSchemaVersion);
  auto j = c->prepare("PRAGMA journal_mode");
  ASSERT_TRUE(j.step());
  EXPECT_EQ(j.text(0), "wal");
  EXPECT_TRUE(has_column(*c, "measurement_runs", "boundary"));
}

TEST(Schema, ReopeningDoesNotMigrateTwice) {
  auto path = test::temp_path("layoutx.db");
  open_database(path);
  auto c = open_database(path);
  EXPECT_EQ(schema_version(*c), kSchemaVersion);
  EXPECT_EQ(test::rows(*c, "schema_version"), 1);
}

// A database written by version-1 code: runs carry no boundary. Opening it with the current
// code migrates it and derives each run's boundary from its format.
TEST(Schema, MigratesVersion1Database) {
  auto path = test::temp_path("v1.db");
  {
    Connection v1(path);
    v1.exec(schema_v1_sql());
    v1.exec("INSERT INTO devices (name) VALUES ('galaxy-s25');"
            "INSERT INTO measurement_runs (source_path, content_hash, format, tool, device_id, ingested_at) VALUES "
            "('a.json', 'h1', 'aihub-json', 'qai-hub', 1, '2026-01-01T00:00:00Z'),"
            "('b.csv', 'h2', 'qnn-csv', 'qnn-profile-viewer', 1, '2026-01-02T00:00:00Z'),"
            "('c.yaml', 'h3', 'yaml', 'layoutx-measurements', 1, '2026-01-03T00:00:00Z'),"
            "('d.json', 'h4', 'ort-json', 'onnxruntime', 1, '2026-01-04T00:00:00Z');");
    EXPECT_EQ(schema_version(v1), 1);
    EXPECT_FALSE(has_column(v1, "measurement_runs", "boundary"));
  }
  auto c = open_database(path);
  EXPECT_EQ(schema_version(*c), kSchemaVersion);
  auto s = c->prepare("SELECT source_path, boundary FROM measurement_runs ORDER BY id");
  std::vector<std::string> got;
  while (s.step()) got.push_back(s.text(0) + "=" + s.text(1));
  EXPECT_EQ(got, (std::vector<std::string>{"a.json=aihub_estimate", "b.csv=accelerator", "c.yaml=ours", "d.json=ort_node"}));
  // The migrated column keeps the v2 constraint.
  EXPECT_THROW(c->exec("UPDATE measurement_runs SET boundary = 'wall_clock' WHERE id = 1"), Error);
}

// A database written by version-2 code spells every axis in its variant keys. Opening it
// rewrites each key in the current form (axes at their default left out); the ids, and so every
// measurement that points at them, stay.
TEST(Schema, MigratesVersion2VariantKeys) {
  auto path = test::temp_path("v2.db");
  const std::vector<std::string> v2_keys = {
      "returns=window,join=keys,softmax=fused,gelu=erf,precision=fp16",
      "returns=new_entry,join=keys,softmax=fused,gelu=erf,precision=w4a16",
      "returns=new_entry,join=scores,softmax=explicit,new_score=mul_reducesum,new_value=matmul,gelu=tanh,precision=w8a16"};
  {
    Connection v2(path);
    v2.exec(schema_v1_sql());
    v2.exec("ALTER TABLE measurement_runs ADD COLUMN boundary TEXT NOT NULL DEFAULT 'ours'; UPDATE schema_version SET version = 2;");
    for (const auto& k : v2_keys)
      v2.prepare("INSERT INTO variants (key, preset, precision) VALUES (?1, '', 'fp16')").bind(1, k).run();
  }
  auto c = open_database(path);
  EXPECT_EQ(schema_version(*c), kSchemaVersion);
  auto s = c->prepare("SELECT id, key FROM variants ORDER BY id");
  std::vector<std::string> got;
  while (s.step()) got.push_back(std::to_string(s.int64(0)) + ":" + s.text(1));
  EXPECT_EQ(got, (std::vector<std::string>{"1:precision=fp16", "2:returns=new_entry,precision=w4a16",
                                           "3:returns=new_entry,join=scores,softmax=explicit,new_score=mul_reducesum,gelu=tanh,precision=w8a16"}));
  // Each migrated key names the variant its v2 key named.
  for (size_t i = 0; i < v2_keys.size(); ++i)
    EXPECT_EQ(model::parse_variant(got[i].substr(2)), model::parse_variant(v2_keys[i])) << v2_keys[i];
}

// Version-3 code stored a compile outcome as a boolean `ok`; version 4 stores ok | fail |
// contested in `result`, and the column keeps that constraint.
TEST(Schema, MigratesVersion3CompileOutcomes) {
  auto path = test::temp_path("v3.db");
  {
    Connection v3(path);
    v3.exec(schema_v1_sql());
    v3.exec("ALTER TABLE measurement_runs ADD COLUMN boundary TEXT NOT NULL DEFAULT 'ours'; UPDATE schema_version SET version = 3;");
    v3.exec("INSERT INTO devices (name) VALUES ('galaxy-s25');"
            "INSERT INTO measurement_runs (source_path, content_hash, format, tool, device_id, ingested_at) VALUES "
            "('c.yaml', 'h', 'yaml', 'layoutx-measurements', 1, '2026-01-03T00:00:00Z');"
            "INSERT INTO compile_outcomes (run_id, device_id, precision, form, ok) VALUES "
            "(1, 1, 'w4a16', 'explicit softmax', 0), (1, 1, 'w4a16', 'ring', 1);");
  }
  auto c = open_database(path);
  EXPECT_EQ(schema_version(*c), kSchemaVersion);
  EXPECT_FALSE(has_column(*c, "compile_outcomes", "ok"));
  auto s = c->prepare("SELECT form, result FROM compile_outcomes ORDER BY id");
  std::vector<std::string> got;
  while (s.step()) got.push_back(s.text(0) + "=" + s.text(1));
  EXPECT_EQ(got, (std::vector<std::string>{"explicit softmax=fail", "ring=ok"}));
  EXPECT_THROW(c->exec("UPDATE compile_outcomes SET result = 'maybe' WHERE id = 1"), Error);
}

TEST(Schema, RefusesNewerSchema) {
  auto path = test::temp_path("future.db");
  {
    auto c = open_database(path);
    c->exec("UPDATE schema_version SET version = 99");
  }
  try {
    open_database(path);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("schema version 99 is newer"));
  }
}

TEST(Schema, DefaultPathFollowsXdgThenHome) {
  const char* old_xdg = std::getenv("XDG_DATA_HOME");
  std::string saved = old_xdg ? old_xdg : "";
  setenv("XDG_DATA_HOME", "/x/data", 1);
  EXPECT_EQ(default_db_path(), "/x/data/layoutx/layoutx.db");
  unsetenv("XDG_DATA_HOME");
  std::string home = std::getenv("HOME") ? std::getenv("HOME") : "";
  setenv("HOME", "/h", 1);
  EXPECT_EQ(default_db_path(), "/h/.local/share/layoutx/layoutx.db");
  setenv("HOME", home.c_str(), 1);
  if (old_xdg) setenv("XDG_DATA_HOME", saved.c_str(), 1);
}

}  // namespace
}  // namespace layoutx::db
