// The SQLite backend of db/connection.h.
#include <sqlite3.h>

#include <cstdio>

#include "db/connection.h"
#include "support/error.h"

namespace layoutx::db {

namespace {

[[noreturn]] void fail(sqlite3* db, const std::string& path, const std::string& what) {
  throw Error(path + ": database error: " + what + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

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

class SqliteStatement : public StatementImpl {
 public:
  SqliteStatement(sqlite3* db, const std::string& path, const std::string& sql) : db_(db), path_(path), sql_(sql) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK)
      fail(db, path, "cannot prepare \"" + sql.substr(0, 80) + "\"");
  }
  ~SqliteStatement() override { sqlite3_finalize(stmt_); }

  void bind_int64(int i, int64_t v) override { check(sqlite3_bind_int64(stmt_, i, v)); }
  void bind_double(int i, double v) override { check(sqlite3_bind_double(stmt_, i, v)); }
  void bind_text(int i, std::string_view v) override {
    check(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  }
  void bind_null(int i) override { check(sqlite3_bind_null(stmt_, i)); }
  bool step() override {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail(db_, path_, "\"" + sql_.substr(0, 80) + "\"");
  }
  void reset() override {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  int columns() const override { return sqlite3_column_count(stmt_); }
  bool is_null(int i) const override { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }
  int64_t int64(int i) const override { return sqlite3_column_int64(stmt_, i); }
  double real(int i) const override { return sqlite3_column_double(stmt_, i); }
  std::string text(int i) const override {
    auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, i));
    return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, i))) : std::string();
  }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK) fail(db_, path_, "bind");
  }
  sqlite3* db_;
  const std::string& path_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

class SqliteConnection : public ConnectionImpl {
 public:
  SqliteConnection(const std::string& path, Connection::Mode mode) : path_(path) {
    int rc = SQLITE_OK;
    switch (mode) {
      case Connection::Mode::kReadWriteCreate:
        rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
        break;
      case Connection::Mode::kReadWrite:
        rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr);
        break;
      case Connection::Mode::kReadOnly:
        rc = sqlite3_open_v2(file_uri(path, "mode=ro").c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
        break;
      case Connection::Mode::kImmutable:
        rc = sqlite3_open_v2(file_uri(path, "mode=ro&immutable=1").c_str(), &db_,
                             SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
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
  ~SqliteConnection() override { sqlite3_close_v2(db_); }

  void exec(const std::string& sql) override {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : sqlite3_errmsg(db_);
      sqlite3_free(err);
      throw Error(path_ + ": database error: " + msg + " (in: " + sql.substr(0, 80) + ")");
    }
  }
  std::unique_ptr<StatementImpl> prepare(const std::string& sql) override {
    return std::make_unique<SqliteStatement>(db_, path_, sql);
  }
  int64_t last_insert_id() override { return sqlite3_last_insert_rowid(db_); }
  void begin_write() override { exec("BEGIN IMMEDIATE"); }
  void rollback_quietly() noexcept override { sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr); }
  sqlite3* sqlite_handle() override { return db_; }

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace

std::unique_ptr<ConnectionImpl> open_sqlite(const std::string& path, Connection::Mode mode) {
  return std::make_unique<SqliteConnection>(path, mode);
}

}  // namespace layoutx::db
