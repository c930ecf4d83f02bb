// Where SQLite and PostgreSQL differ, in one place: the placeholders, the schema's column types,
// how to ask whether a table exists, and what a connection target looks like. Every other query
// is written once, in the SQL both accept (ON CONFLICT ... DO NOTHING, RETURNING, CASE, ...).
#pragma once
#include <string>

namespace layoutx::db {

enum class Dialect { kSqlite, kPostgres };

// `--db postgresql://...` or `postgres://...` (libpq URIs; `postgres:///name` is the local socket).
bool is_postgres_target(const std::string& target);

// The SQL as the backend takes it. PostgreSQL: ?N -> $N (outside quotes); in DDL, INTEGER
// PRIMARY KEY -> BIGSERIAL PRIMARY KEY, INTEGER -> BIGINT (ids and counts are 64-bit), REAL ->
// DOUBLE PRECISION (SQLite's REAL is 8 bytes). SQLite: unchanged.
std::string dialect_sql(Dialect d, const std::string& sql);

// One row, one column: 1 if the table exists in the current schema, else 0.
std::string table_exists_sql(Dialect d);

// A connection string fit to print: the password of a URI's user info and any password=
// parameter replaced by "***".
std::string redact_connection_string(const std::string& target);

}  // namespace layoutx::db
