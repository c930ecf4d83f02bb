// The database connection every db/ query goes through, whichever backend holds the data:
// SQLite (a file path) or PostgreSQL (`postgresql://...` / `postgres:///name`, libpq). The API is
// SQLite's shape: prepared statements with 1-based typed binds (?1, ?2 in the SQL; PostgreSQL
// gets $1, $2 from db/dialect.h), 0-based columns, and a write transaction guard. Every failure
// throws layoutx::Error naming the database (a PostgreSQL connection string without its password)
// and the statement.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "db/dialect.h"
#include "support/error.h"

struct sqlite3;

namespace layoutx::db {

// A transaction the server aborted to resolve a conflict between concurrent writers
// (PostgreSQL's deadlock_detected 40P01, serialization_failure 40001): running it again succeeds.
class TransientDbError : public Error {
 public:
  using Error::Error;
};

// One backend's statement and connection (db/sqlite_backend.cc, db/postgres_backend.cc).
class StatementImpl {
 public:
  virtual ~StatementImpl() = default;
  virtual void bind_int64(int i, int64_t v) = 0;
  virtual void bind_double(int i, double v) = 0;
  virtual void bind_text(int i, std::string_view v) = 0;
  virtual void bind_null(int i) = 0;
  virtual bool step() = 0;   // true while a row is available
  virtual void reset() = 0;  // ready to run again, binds cleared
  virtual int columns() const = 0;
  virtual bool is_null(int i) const = 0;
  virtual int64_t int64(int i) const = 0;
  virtual double real(int i) const = 0;
  virtual std::string text(int i) const = 0;
};

class ConnectionImpl {
 public:
  virtual ~ConnectionImpl() = default;
  virtual void exec(const std::string& sql) = 0;  // one or more statements, no results
  virtual std::unique_ptr<StatementImpl> prepare(const std::string& sql) = 0;
  virtual int64_t last_insert_id() = 0;
  virtual void begin_write() = 0;         // SQLite: BEGIN IMMEDIATE; PostgreSQL: BEGIN
  virtual void rollback_quietly() noexcept = 0;
  virtual sqlite3* sqlite_handle() { return nullptr; }
};

class Statement;

class Connection {
 public:
  // How it is opened. kReadOnly: SQLite's mode=ro (never writes the file, never changes its
  // journal mode), PostgreSQL's default_transaction_read_only; kImmutable (SQLite only): read-only
  // and also no locks or -shm file (a database on a read-only folder or filesystem).
  enum class Mode { kReadWriteCreate, kReadWrite, kReadOnly, kImmutable };
  // `target`: a file path (SQLite) or a PostgreSQL connection URI (is_postgres_target).
  explicit Connection(const std::string& target, Mode mode = Mode::kReadWriteCreate);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs one or more statements with no results.
  void exec(const std::string& sql);
  Statement prepare(const std::string& sql);
  int64_t last_insert_id();
  // What to call the database in messages and output: the file, or the URI without a password.
  const std::string& path() const { return name_; }
  Dialect dialect() const { return dialect_; }
  // The SQLite handle (busy timeout), or null for PostgreSQL.
  sqlite3* raw() const { return impl_->sqlite_handle(); }
  ConnectionImpl& impl() { return *impl_; }

 private:
  std::unique_ptr<ConnectionImpl> impl_;
  std::string name_;
  Dialect dialect_;
};

class Statement {
 public:
  Statement(Connection& c, const std::string& sql);
  Statement(Statement&& o) noexcept = default;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Binds are 1-based, as in SQLite.
  Statement& bind(int i, int64_t v) { impl_->bind_int64(i, v); return *this; }
  Statement& bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
  Statement& bind(int i, double v) { impl_->bind_double(i, v); return *this; }
  Statement& bind(int i, std::string_view v) { impl_->bind_text(i, v); return *this; }
  Statement& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Statement& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Statement& bind_null(int i) { impl_->bind_null(i); return *this; }
  template <typename T>
  Statement& bind(int i, const std::optional<T>& v) {
    return v ? bind(i, *v) : bind_null(i);
  }

  // Advances; true while a row is available.
  bool step() { return impl_->step(); }
  // Runs a statement that returns no rows (or ignores them), then resets it for reuse.
  void run() {
    while (step()) {
    }
    reset();
  }
  void reset() { impl_->reset(); }

  // Columns are 0-based, as in SQLite.
  int columns() const { return impl_->columns(); }
  bool is_null(int i) const { return impl_->is_null(i); }
  int64_t int64(int i) const { return impl_->int64(i); }
  double real(int i) const { return impl_->real(i); }
  std::string text(int i) const { return impl_->text(i); }
  std::optional<double> opt_real(int i) const {
    if (is_null(i)) return std::nullopt;
    return real(i);
  }
  std::optional<int64_t> opt_int64(int i) const {
    if (is_null(i)) return std::nullopt;
    return int64(i);
  }

 private:
  std::unique_ptr<StatementImpl> impl_;
};

// A write transaction: SQLite's BEGIN IMMEDIATE (takes the write lock up front, so two writers
// wait on the busy timeout instead of failing on a read-to-write upgrade), PostgreSQL's BEGIN;
// ROLLBACK unless commit() ran.
class Transaction {
 public:
  explicit Transaction(Connection& c);
  ~Transaction();
  void commit();

 private:
  Connection& conn_;
  bool done_ = false;
};

// The backends (used by Connection's constructor).
std::unique_ptr<ConnectionImpl> open_sqlite(const std::string& path, Connection::Mode mode);
std::unique_ptr<ConnectionImpl> open_postgres(const std::string& uri, Connection::Mode mode, const std::string& name);

}  // namespace layoutx::db
