// The one place SQLite and PostgreSQL differ: placeholders, schema types, connection strings.
#include "db/dialect.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "db/connection.h"
#include "support/error.h"

namespace layoutx::db {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(Dialect, TargetsByScheme) {
  EXPECT_TRUE(is_postgres_target("postgresql://ci@db.example/layoutx"));
  EXPECT_TRUE(is_postgres_target("postgres:///layoutx"));
  EXPECT_FALSE(is_postgres_target("build/layoutx.db"));
  EXPECT_FALSE(is_postgres_target("postgres.db"));
}

TEST(Dialect, PlaceholdersAndTypes) {
  EXPECT_EQ(dialect_sql(Dialect::kSqlite, "SELECT ?1"), "SELECT ?1");
  EXPECT_EQ(dialect_sql(Dialect::kPostgres, "SELECT a FROM t WHERE b = ?1 AND c = '?2' AND d = ?12"),
            "SELECT a FROM t WHERE b = $1 AND c = '?2' AND d = $12");
  EXPECT_EQ(dialect_sql(Dialect::kPostgres, "CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER, ms REAL NOT NULL);"),
            "CREATE TABLE t (id BIGSERIAL PRIMARY KEY, n BIGINT, ms DOUBLE PRECISION NOT NULL);");
}

TEST(Dialect, PasswordsAreNeverShown) {
  EXPECT_EQ(redact_connection_string("postgresql://ci:s3cret@db.example:5432/layoutx"),
            "postgresql://ci:***@db.example:5432/layoutx");
  EXPECT_EQ(redact_connection_string("postgres:///layoutx?host=/tmp&password=s3cret&sslmode=disable"),
            "postgres:///layoutx?host=/tmp&password=***&sslmode=disable");
  EXPECT_EQ(redact_connection_string("postgresql://ci@db/x"), "postgresql://ci@db/x");
  // A failed connection names the database without the password.
  try {
    Connection c("postgresql://ci:s3cret@/nodb?host=/nonexistent-socket-dir");
    FAIL() << "connected";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("postgresql://ci:***@/nodb"));
    EXPECT_THAT(e.what(), Not(HasSubstr("s3cret")));
  }
}

}  // namespace
}  // namespace layoutx::db
