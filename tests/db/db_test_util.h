// Helpers for the db tests: a fresh database file per test, a full dump of its content.
#pragma once
#include <memory>
#include <string>

#include "db/sqlite.h"

namespace layoutx::db::test {

// A new empty directory under the system temp dir; `file` inside it. Under LAYOUTX_TEST_PG, a
// "*.db" is a fresh PostgreSQL database's URI instead (db_test_util.cc).
bool on_postgres();
std::string temp_path(const std::string& file);
// Every row of every table, as text (the "database unchanged" check compares two dumps).
std::string dump(Connection& c);
// tests/fixtures/profiles/<name>
std::string fixture(const std::string& name);
// Number of rows of a table.
int64_t rows(Connection& c, const std::string& table);

}  // namespace layoutx::db::test
