#include "db/schema.h"

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <vector>
#include <unistd.h>

#include "model/variant.h"
#include "support/error.h"
#include "support/output_target.h"
#include "support/timing_boundaries.h"

namespace layoutx::db {

namespace {

// support/timing_boundaries.h (the SQL below spells them out: a migration is fixed text).
const char* const* const kBoundaries = kTimingBoundaries;

// Version 1. Units: every *_ms column is milliseconds; cycles are HTP cycles; dates are ISO-8601
// UTC text.
const std::string kSchemaV1 = R"sql(
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE devices (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,          -- our device id, e.g. galaxy-s25
  description TEXT NOT NULL DEFAULT ''
);
CREATE TABLE models (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE           -- model name, e.g. spark-x2.5-1.7b
);
CREATE TABLE variants (
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,           -- model::Variant::key()
  preset TEXT NOT NULL DEFAULT '',    -- model::Variant::preset(), '' if none
  precision TEXT NOT NULL
);
CREATE TABLE measurement_runs (
  id INTEGER PRIMARY KEY,
  source_path TEXT NOT NULL,
  content_hash TEXT NOT NULL UNIQUE,  -- SHA-256 of the file's bytes, hex
  format TEXT NOT NULL,               -- yaml, csv, qnn-csv, aihub-json, ort-json
  tool TEXT NOT NULL,
  tool_version TEXT NOT NULL DEFAULT '',
  device_id INTEGER NOT NULL REFERENCES devices(id),
  ingested_at TEXT NOT NULL,
  notes TEXT NOT NULL DEFAULT ''
);
CREATE TABLE layer_measurements (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES measurement_runs(id) ON DELETE CASCADE,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  model_id INTEGER NOT NULL REFERENCES models(id),
  variant_id INTEGER NOT NULL REFERENCES variants(id),
  layer_type TEXT NOT NULL CHECK (layer_type IN ('sliding', 'full')),
  ctx INTEGER NOT NULL,               -- context the step was built for (tokens)
  cache_entries INTEGER,              -- past K/V entries, when the source states them
  precision TEXT NOT NULL,
  ms REAL NOT NULL CHECK (ms >= 0),   -- one decode step of one layer
  samples INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX layer_measurements_key ON layer_measurements(device_id, model_id, variant_id, layer_type, ctx);
CREATE TABLE op_measurements (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES measurement_runs(id) ON DELETE CASCADE,
  layer_measurement_id INTEGER REFERENCES layer_measurements(id),
  inference INTEGER NOT NULL DEFAULT 0,  -- which repetition of the graph (0-based)
  op_name TEXT NOT NULL,
  op_type TEXT NOT NULL DEFAULT '',
  ms REAL CHECK (ms >= 0),
  cycles INTEGER CHECK (cycles >= 0),
  compute_unit TEXT NOT NULL DEFAULT ''
);
CREATE TABLE op_shares (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES measurement_runs(id) ON DELETE CASCADE,
  model_id INTEGER NOT NULL REFERENCES models(id),
  layer_type TEXT NOT NULL,           -- sliding, full or any
  ctx INTEGER,                        -- null when the source does not state it
  selector TEXT NOT NULL,             -- the axes the record names, "axis=value,..." ('' = any)
  op TEXT NOT NULL,                   -- the source's description of the op
  share_min REAL NOT NULL,            -- fraction of the layer's time
  share_max REAL NOT NULL
);
CREATE TABLE compile_outcomes (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES measurement_runs(id) ON DELETE CASCADE,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  variant_id INTEGER REFERENCES variants(id),  -- when the outcome is for one variant
  precision TEXT NOT NULL,
  form TEXT NOT NULL DEFAULT '',      -- the op form, as the source describes it
  ok INTEGER NOT NULL,
  exit_code INTEGER,
  message TEXT NOT NULL DEFAULT ''
);
CREATE TABLE calibrations (
  id TEXT PRIMARY KEY,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  created_at TEXT NOT NULL,
  coefficients TEXT NOT NULL,         -- the cost model's coefficients, as it serializes them
  data_hash TEXT NOT NULL,            -- hash of the records it was fitted on
  provenance TEXT NOT NULL DEFAULT '',
  loo_error REAL                      -- leave-one-out relative error, when reported
);
CREATE TABLE predictions (
  id INTEGER PRIMARY KEY,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  model_id INTEGER NOT NULL REFERENCES models(id),
  variant_id INTEGER NOT NULL REFERENCES variants(id),
  layer_type TEXT NOT NULL,
  ctx INTEGER NOT NULL,
  ms REAL NOT NULL,
  low_ms REAL NOT NULL,
  high_ms REAL NOT NULL,
  calibration_id TEXT NOT NULL,       -- which calibration made it (calibrations.id when stored)
  made_at TEXT NOT NULL
);
INSERT INTO schema_version (version) VALUES (1);
)sql";

// v1 -> v2: the timing boundary of each run. Runs stored by v1 code get the boundary their tool
// implies: our files -> ours, AI Hub -> aihub_estimate, ONNX Runtime -> ort_node, qnn-profile-viewer
// -> accelerator (the figure v1 took from it).
const std::string kMigrateV1ToV2 = R"sql(
ALTER TABLE measurement_runs ADD COLUMN boundary TEXT NOT NULL DEFAULT 'ours'
  CHECK (boundary IN ('netrun', 'accelerator', 'accelerator_excl_wait', 'aihub_estimate', 'ort_node', 'ours'));
UPDATE measurement_runs SET boundary = CASE format
  WHEN 'aihub-json' THEN 'aihub_estimate'
  WHEN 'ort-json' THEN 'ort_node'
  WHEN 'qnn-csv' THEN 'accelerator'
  ELSE 'ours' END;
UPDATE schema_version SET version = 2;
)sql";

// v2 -> v3: variant keys leave out the axes at their default (model/design_space.h), so a key
// survives a new axis. Every stored key is parsed (a v2 key spells every axis; the parser takes
// any subset) and written back in the new form; the mapping is one-to-one, so UNIQUE holds.
void migrate_v2_to_v3(Connection& c) {
  std::vector<std::pair<int64_t, std::string>> rekeyed;
  auto q = c.prepare("SELECT id, key FROM variants ORDER BY id");
  while (q.step()) {
    const std::string old_key = q.text(1);
    std::string new_key;
    try {
      new_key = model::parse_variant(old_key).key();
    } catch (const Error& e) {
      throw Error("variants row " + std::to_string(q.int64(0)) + ": stored key '" + old_key + "' no longer parses: " + e.what());
    }
    if (new_key != old_key) rekeyed.emplace_back(q.int64(0), new_key);
  }
  for (const auto& [id, key] : rekeyed) c.prepare("UPDATE variants SET key = ?1 WHERE id = ?2").bind(1, key).bind(2, id).run();
  c.exec("UPDATE schema_version SET version = 3");
}

// v3 -> v4: a compile outcome is ok, fail or contested (the sources disagree: shared/data's
// score-join at w4a16), so the boolean `ok` becomes `result`. ADD/DROP COLUMN work in both
// dialects (SQLite >= 3.35).
const std::string kMigrateV3ToV4 = R"sql(
ALTER TABLE compile_outcomes ADD COLUMN result TEXT NOT NULL DEFAULT 'ok' CHECK (result IN ('ok', 'fail', 'contested'));
UPDATE compile_outcomes SET result = CASE ok WHEN 1 THEN 'ok' ELSE 'fail' END;
ALTER TABLE compile_outcomes DROP COLUMN ok;
UPDATE schema_version SET version = 4;
)sql";

// migrations[i] takes version i+1 to i+2.
const std::vector<std::function<void(Connection&)>>& migrations() {
  static const std::vector<std::function<void(Connection&)>> m = {
      [](Connection& c) { c.exec(kMigrateV1ToV2); },
      migrate_v2_to_v3,
      [](Connection& c) { c.exec(kMigrateV3ToV4); },
  };
  return m;
}

}  // namespace

const char* const* boundary_names() { return kBoundaries; }

bool is_boundary(const std::string& s) { return is_timing_boundary(s); }

const std::string& schema_v1_sql() { return kSchemaV1; }

std::string default_db_path() {
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x) return std::string(x) + "/layoutx/layoutx.db";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.local/share/layoutx/layoutx.db";
  throw Error("no database path: set --db PATH, XDG_DATA_HOME or HOME");
}

int schema_version(Connection& c) {
  auto t = c.prepare(table_exists_sql(c.dialect()));
  t.bind(1, "schema_version").step();
  if (t.int64(0) == 0) return 0;
  auto s = c.prepare("SELECT max(version) FROM schema_version");
  if (!s.step() || s.is_null(0)) return 0;
  return static_cast<int>(s.int64(0));
}

namespace {

// The database file must exist (and be a file): the gates never create one.
void require_existing(const std::string& path) {
  if (is_postgres_target(path)) return;  // a missing PostgreSQL database fails to connect
  std::error_code ec;
  auto st = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(st))
    throw Error(path + ": no such database (only `layoutx ingest` creates one; check the --db path)");
  if (!std::filesystem::is_regular_file(st)) throw Error(path + ": not a database file");
}

std::unique_ptr<Connection> open_read_write(const std::string& path, Connection::Mode mode, int busy_timeout_ms) {
  // 1. Open; wait on locks for up to busy_timeout_ms before failing (several CI jobs at once).
  auto c = std::make_unique<Connection>(path, mode);
  if (c->dialect() == Dialect::kSqlite) {
    sqlite3_busy_timeout(c->raw(), busy_timeout_ms);
    // 2. WAL: readers do not block the writer; persistent in the file once set.
    c->exec("PRAGMA journal_mode = WAL");
    c->exec("PRAGMA foreign_keys = ON");
  }
  // 3. Create or migrate, under the write lock so two processes do not both create it
  //    (PostgreSQL: a transaction-scoped advisory lock on layoutx's schema).
  Transaction tx(*c);
  if (c->dialect() == Dialect::kPostgres) c->exec("SELECT pg_advisory_xact_lock(7400421)");
  int v = schema_version(*c);
  if (v > kSchemaVersion)
    throw Error(path + ": database schema version " + std::to_string(v) + " is newer than this layoutx knows (" +
                std::to_string(kSchemaVersion) + ")");
  if (v == 0) {
    c->exec(kSchemaV1);
    v = 1;
  }
  for (; v < kSchemaVersion; ++v) migrations()[static_cast<size_t>(v - 1)](*c);
  tx.commit();
  return c;
}

}  // namespace

std::unique_ptr<Connection> open_database(const std::string& path_in, int busy_timeout_ms) {
  std::string path = path_in.empty() ? default_db_path() : path_in;
  if (!is_postgres_target(path)) {
    // The default database's folder is created (a fresh machine has none); a path given with
    // --db must name an existing folder, as every output does. Then the output rule: a device
    // node or FIFO is refused, a symbolic link is written through (support/output_target.h).
    if (path_in.empty()) ensure_directory(std::filesystem::path(path).parent_path());
    check_file_target(path, "--db");
  }
  return open_read_write(path, Connection::Mode::kReadWriteCreate, busy_timeout_ms);
}

std::unique_ptr<Connection> open_existing_database(const std::string& path_in, int busy_timeout_ms) {
  std::string path = path_in.empty() ? default_db_path() : path_in;
  require_existing(path);
  return open_read_write(path, Connection::Mode::kReadWrite, busy_timeout_ms);
}

std::unique_ptr<Connection> open_database_readonly(const std::string& path_in, int busy_timeout_ms) {
  std::string path = path_in.empty() ? default_db_path() : path_in;
  require_existing(path);
  // 1. mode=ro; a WAL database whose folder is read-only has no -shm SQLite can create, so the
  //    first read fails: then immutable=1 (nobody can be writing a file in a read-only folder).
  std::unique_ptr<Connection> c;
  int v = 0;
  if (is_postgres_target(path)) {
    c = std::make_unique<Connection>(path, Connection::Mode::kReadOnly);  // default_transaction_read_only
    v = schema_version(*c);
  } else {
    try {
      c = std::make_unique<Connection>(path, Connection::Mode::kReadOnly);
      sqlite3_busy_timeout(c->raw(), busy_timeout_ms);
      v = schema_version(*c);
    } catch (const Error&) {
      c.reset();
      auto dir = std::filesystem::path(path).parent_path();
      if (::access(dir.empty() ? "." : dir.c_str(), W_OK) == 0) throw;  // not the read-only-folder case
      c = std::make_unique<Connection>(path, Connection::Mode::kImmutable);
      v = schema_version(*c);
    }
  }
  // 2. A read-only open cannot migrate: the schema must be the one this code reads.
  if (v == 0) throw Error(path + ": not a layoutx database (no schema_version table)");
  if (v != kSchemaVersion)
    throw Error(path + ": database schema version " + std::to_string(v) + ", this layoutx reads version " +
                std::to_string(kSchemaVersion) + (v < kSchemaVersion ? " (any `layoutx ingest` into it migrates it)" : ""));
  return c;
}

}  // namespace layoutx::db
