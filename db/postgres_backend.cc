// The PostgreSQL backend of db/connection.h (libpq, loaded on first use: db/libpq.h). Binds are sent as text with the type left
// to the server (it infers each parameter's type from its use); results are read as text.
// The connection string comes from --db (a libpq URI); libpq also reads PGPASSFILE and the PG*
// environment. Messages name the database by the URI without its password.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "db/connection.h"
#include "db/libpq.h"
#include "support/error.h"

namespace layoutx::db {

namespace {

// The server's message, one line.
std::string message(PGconn* c) {
  std::string m = c ? libpq().errorMessage(c) : "out of memory";
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  for (char& ch : m)
    if (ch == '\n') ch = ' ';
  return m;
}

class PgStatement : public StatementImpl {
 public:
  PgStatement(PGconn* c, const std::string& name, const std::string& sql) : conn_(c), name_(name), sql_(sql) {}
  ~PgStatement() override {
    libpq().clear(res_);
    // Free the server-side statement; not inside a failed transaction (nothing runs there until
    // its rollback, which frees nothing of this, so the name is left to the session's end).
    if (!prepared_.empty() && libpq().transactionStatus(conn_) != PQTRANS_INERROR)
      libpq().clear(libpq().exec(conn_, ("DEALLOCATE " + prepared_).c_str()));
  }

  void bind_int64(int i, int64_t v) override { set(i, std::to_string(v)); }
  void bind_double(int i, double v) override {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    set(i, buf);
  }
  void bind_text(int i, std::string_view v) override { set(i, std::string(v)); }
  void bind_null(int i) override {
    grow(i);
    params_[static_cast<size_t>(i - 1)].reset();
  }
  bool step() override {
    if (!res_) {
      std::vector<const char*> values;
      for (const auto& p : params_) values.push_back(p ? p->c_str() : nullptr);
      // A statement run a second time is prepared on the server (parsed and planned once: the
      // multi-row INSERTs of a big file); a statement run once is sent with its parameters.
      if (++runs_ == 2) {
        static int counter = 0;
        prepared_ = "layoutx_" + std::to_string(++counter);
        PGresult* p = libpq().prepare(conn_, prepared_.c_str(), sql_.c_str(), static_cast<int>(values.size()), nullptr);
        const bool ok = libpq().resultStatus(p) == PGRES_COMMAND_OK;
        libpq().clear(p);
        if (!ok) prepared_.clear();
      }
      res_ = prepared_.empty()
                 ? libpq().execParams(conn_, sql_.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr, nullptr, 0)
                 : libpq().execPrepared(conn_, prepared_.c_str(), static_cast<int>(values.size()), values.data(), nullptr, nullptr, 0);
      const ExecStatusType st = libpq().resultStatus(res_);
      if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
        std::string m = message(conn_);
        const char* state = libpq().resultErrorField(res_, PG_DIAG_SQLSTATE);
        const bool transient = state && (std::string(state) == "40P01" || std::string(state) == "40001");
        libpq().clear(res_);
        res_ = nullptr;
        const std::string what = name_ + ": database error: \"" + sql_.substr(0, 80) + "\": " + m;
        if (transient) throw TransientDbError(what);
        throw Error(what);
      }
      row_ = -1;
    }
    return ++row_ < libpq().ntuples(res_);
  }
  void reset() override {
    libpq().clear(res_);
    res_ = nullptr;
    params_.clear();
  }
  int columns() const override { return res_ ? libpq().nfields(res_) : 0; }
  bool is_null(int i) const override { return libpq().getisnull(res_, row_, i) != 0; }
  int64_t int64(int i) const override { return is_null(i) ? 0 : std::strtoll(libpq().getvalue(res_, row_, i), nullptr, 10); }
  double real(int i) const override { return is_null(i) ? 0.0 : std::strtod(libpq().getvalue(res_, row_, i), nullptr); }
  std::string text(int i) const override {
    return std::string(libpq().getvalue(res_, row_, i), static_cast<size_t>(libpq().getlength(res_, row_, i)));
  }

 private:
  void grow(int i) {
    if (params_.size() < static_cast<size_t>(i)) params_.resize(static_cast<size_t>(i));
  }
  void set(int i, std::string v) {
    grow(i);
    params_[static_cast<size_t>(i - 1)] = std::move(v);
  }
  PGconn* conn_;
  const std::string& name_;
  std::string sql_;
  std::vector<std::optional<std::string>> params_;
  PGresult* res_ = nullptr;
  int row_ = -1;
  int runs_ = 0;           // executions so far
  std::string prepared_;   // the server-side statement's name, once prepared
};

class PgConnection : public ConnectionImpl {
 public:
  PgConnection(const std::string& uri, Connection::Mode mode, const std::string& name) : name_(name) {
    conn_ = libpq().connectdb(uri.c_str());
    if (!conn_ || libpq().status(conn_) != CONNECTION_OK) {
      std::string m = message(conn_);
      libpq().finish(conn_);
      conn_ = nullptr;
      throw Error(name_ + ": cannot open database: " + m);
    }
    // Notices ("relation already exists, skipping") are not errors; keep them off stderr.
    libpq().setNoticeProcessor(conn_, [](void*, const char*) {}, nullptr);
    exec("SET client_min_messages = warning");
    if (mode == Connection::Mode::kReadOnly || mode == Connection::Mode::kImmutable)
      exec("SET default_transaction_read_only = on");
  }
  ~PgConnection() override { libpq().finish(conn_); }

  void exec(const std::string& sql) override {
    PGresult* r = libpq().exec(conn_, sql.c_str());
    const ExecStatusType st = libpq().resultStatus(r);
    libpq().clear(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
      throw Error(name_ + ": database error: " + message(conn_) + " (in: " + sql.substr(0, 80) + ")");
  }
  std::unique_ptr<StatementImpl> prepare(const std::string& sql) override {
    return std::make_unique<PgStatement>(conn_, name_, sql);
  }
  // The id the last INSERT into a BIGSERIAL table took, in this session.
  int64_t last_insert_id() override {
    PgStatement s(conn_, name_, "SELECT lastval()");
    s.step();
    return s.int64(0);
  }
  void begin_write() override { exec("BEGIN"); }
  void rollback_quietly() noexcept override { libpq().clear(libpq().exec(conn_, "ROLLBACK")); }

 private:
  PGconn* conn_ = nullptr;
  std::string name_;
};

}  // namespace

std::unique_ptr<ConnectionImpl> open_postgres(const std::string& uri, Connection::Mode mode, const std::string& name) {
  return std::make_unique<PgConnection>(uri, mode, name);
}

}  // namespace layoutx::db
