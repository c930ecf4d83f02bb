#include "db/sqlite.h"

#include <cstdio>

#include "support/error.h"

namespace layoutx::db {

namespace {
[[noreturn]] void fail(sqlite3* db, const std::string& path, const std::string& what) {
  throw Error(path + ": database error: " + what + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}
}  // namespace

namespace {
// A file: URI for the read-only modes (the path's '%', '?' and '#' escaped).
std::string file_uri(const std::string& path, const char* query) {
  std::string u = "file:";
  for (char ch : path) {
    if (ch == '%' || ch == '?' || ch == '#') {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(ch));
      u += buf;
    } else {
      u += ch;
    }
  }
  return u + "?" + query;
}
}  // namespace

Connection::Connection(const std::string& path, Mode mode) : path_(path) {
  int rc = SQLITE_OK;
  switch (mode) {
    case Mode::kReadWriteCreate:
      rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
      break;
    case Mode::kReadWrite:
      rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr);
      break;
    case Mode::kReadOnly:
      rc = sqlite3_open_v2(file_uri(path, "mode=ro").c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
      break;
    case Mode::kImmutable:
      rc = sqlite3_open_v2(file_uri(path, "mode=ro&immutable=1").c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                           nullptr);
      break;
  }
  if (rc != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error(path + ": cannot open database: " + msg);
  }
  sqlite3_extended_result_codes(db_, 1);
}

Connection::~Connection() { sqlite3_close_v2(db_); }

void Connection::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    throw Error(path_ + ": database error: " + msg + " (in: " + sql.substr(0, 80) + ")");
  }
}

Statement Connection::prepare(const std::string& sql) { return Statement(*this, sql); }

int64_t Connection::last_insert_id() const { return sqlite3_last_insert_rowid(db_); }

Statement::Statement(Connection& c, const std::string& sql) : conn_(&c), sql_(sql) {
  if (sqlite3_prepare_v2(c.raw(), sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK)
    fail(c.raw(), c.path(), "cannot prepare \"" + sql.substr(0, 80) + "\"");
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement::Statement(Statement&& o) noexcept : conn_(o.conn_), stmt_(o.stmt_), sql_(std::move(o.sql_)) {
  o.stmt_ = nullptr;
}

Statement& Statement::bind(int i, int64_t v) {
  if (sqlite3_bind_int64(stmt_, i, v) != SQLITE_OK) fail(conn_->raw(), conn_->path(), "bind");
  return *this;
}
Statement& Statement::bind(int i, double v) {
  if (sqlite3_bind_double(stmt_, i, v) != SQLITE_OK) fail(conn_->raw(), conn_->path(), "bind");
  return *this;
}
Statement& Statement::bind(int i, std::string_view v) {
  if (sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT) != SQLITE_OK)
    fail(conn_->raw(), conn_->path(), "bind");
  return *this;
}
Statement& Statement::bind_null(int i) {
  if (sqlite3_bind_null(stmt_, i) != SQLITE_OK) fail(conn_->raw(), conn_->path(), "bind");
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(conn_->raw(), conn_->path(), "\"" + sql_.substr(0, 80) + "\"");
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int Statement::columns() const { return sqlite3_column_count(stmt_); }
bool Statement::is_null(int i) const { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }
int64_t Statement::int64(int i) const { return sqlite3_column_int64(stmt_, i); }
double Statement::real(int i) const { return sqlite3_column_double(stmt_, i); }
std::string Statement::text(int i) const {
  auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, i));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, i))) : std::string();
}
std::optional<double> Statement::opt_real(int i) const {
  if (is_null(i)) return std::nullopt;
  return real(i);
}
std::optional<int64_t> Statement::opt_int64(int i) const {
  if (is_null(i)) return std::nullopt;
  return int64(i);
}

Transaction::Transaction(Connection& c) : conn_(c) { conn_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (!done_) sqlite3_exec(conn_.raw(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  conn_.exec("COMMIT");
  done_ = true;
}

}  // namespace layoutx::db
