// The measurement database's schema (design.md, "What the database keeps"): its version, the
// forward migrations, and opening a database with WAL and a busy timeout.
//
// Version history:
//   1  first schema: runs without a timing boundary.
//   2  measurement_runs.boundary: which timing boundary a run's figures measure (netrun,
//      accelerator, accelerator_excl_wait, aihub_estimate, ort_node, ours); v1 runs are
//      migrated by their tool (see migrate_v1_to_v2 in schema.cc).
#pragma once
#include <memory>
#include <string>

#include "db/sqlite.h"

namespace layoutx::db {

inline constexpr int kSchemaVersion = 4;

// The timing boundaries a run may declare (the CHECK constraint of measurement_runs.boundary).
const char* const* boundary_names();  // null-terminated list
bool is_boundary(const std::string& s);

// Default database path: $XDG_DATA_HOME/layoutx/layoutx.db, else ~/.local/share/layoutx/layoutx.db.
// Throws Error if neither XDG_DATA_HOME nor HOME is set.
std::string default_db_path();

// Opens the database at `path` (an empty path: default_db_path(), whose folder is created when
// absent; a given path's folder must exist), creating the schema when absent, migrating an older schema forward, and setting WAL journaling, a busy
// timeout (`busy_timeout_ms`) and foreign keys. Throws Error for a newer schema than this code knows.
std::unique_ptr<Connection> open_database(const std::string& path, int busy_timeout_ms = 10000);

// For the verbs that only read (regress, report, predict --db ...): opens an EXISTING database
// read-only (SQLite mode=ro; the journal mode is not touched, nothing is written, so a CI gate
// cannot change what it checks). On a read-only folder or filesystem, where SQLite cannot keep
// its -shm file, falls back to immutable=1. Throws Error when the file does not exist (only
// `layoutx ingest` creates a database), is not a layoutx database, or has another schema version.
std::unique_ptr<Connection> open_database_readonly(const std::string& path, int busy_timeout_ms = 10000);

// For the verbs that add to an existing database without ingesting (calibrate --db, regress
// --record-predictions): like open_database, but a missing file is an error, not created.
std::unique_ptr<Connection> open_existing_database(const std::string& path, int busy_timeout_ms = 10000);

// The schema version recorded in the database (0 if it has none yet).
int schema_version(Connection& c);

// The SQL that creates schema version 1 exactly (tests build a v1 database with it).
const std::string& schema_v1_sql();

}  // namespace layoutx::db
