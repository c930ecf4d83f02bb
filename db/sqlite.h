// A thin RAII layer over the SQLite C API: a connection, prepared statements with typed binds
// and columns, and a transaction guard. Every SQLite failure throws layoutx::Error naming the
// database file and the statement.
#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace layoutx::db {

class Statement;

class Connection {
 public:
  // How a file is opened. kReadOnly: SQLite's mode=ro (never writes the file, never changes its
  // journal mode); kImmutable: read-only and also no locks or -shm file (a database on a
  // read-only folder or filesystem, which nobody can be writing).
  enum class Mode { kReadWriteCreate, kReadWrite, kReadOnly, kImmutable };
  // Opens the database file (kReadWriteCreate: creating it if absent). Throws Error on failure.
  explicit Connection(const std::string& path, Mode mode = Mode::kReadWriteCreate);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs one or more statements with no results.
  void exec(const std::string& sql);
  Statement prepare(const std::string& sql);
  int64_t last_insert_id() const;
  const std::string& path() const { return path_; }
  sqlite3* raw() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

class Statement {
 public:
  Statement(Connection& c, const std::string& sql);
  ~Statement();
  Statement(Statement&& o) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Binds are 1-based, as in SQLite.
  Statement& bind(int i, int64_t v);
  Statement& bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
  Statement& bind(int i, double v);
  Statement& bind(int i, std::string_view v);
  Statement& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Statement& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Statement& bind_null(int i);
  template <typename T>
  Statement& bind(int i, const std::optional<T>& v) {
    return v ? bind(i, *v) : bind_null(i);
  }

  // Advances; true while a row is available.
  bool step();
  // Runs a statement that returns no rows (or ignores them), then resets it for reuse.
  void run();
  void reset();

  // Columns are 0-based, as in SQLite.
  int columns() const;
  bool is_null(int i) const;
  int64_t int64(int i) const;
  double real(int i) const;
  std::string text(int i) const;
  std::optional<double> opt_real(int i) const;
  std::optional<int64_t> opt_int64(int i) const;

 private:
  Connection* conn_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

// BEGIN IMMEDIATE on construction (takes the write lock up front, so two writers wait on the
// busy timeout instead of failing on a read-to-write upgrade); ROLLBACK unless commit() ran.
class Transaction {
 public:
  explicit Transaction(Connection& c);
  ~Transaction();
  void commit();

 private:
  Connection& conn_;
  bool done_ = false;
};

}  // namespace layoutx::db
