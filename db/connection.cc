#include "db/connection.h"

namespace layoutx::db {

Connection::Connection(const std::string& target, Mode mode)
    : name_(is_postgres_target(target) ? redact_connection_string(target) : target),
      dialect_(is_postgres_target(target) ? Dialect::kPostgres : Dialect::kSqlite) {
  impl_ = dialect_ == Dialect::kPostgres ? open_postgres(target, mode, name_) : open_sqlite(target, mode);
}

Connection::~Connection() = default;

void Connection::exec(const std::string& sql) { impl_->exec(dialect_sql(dialect_, sql)); }

Statement Connection::prepare(const std::string& sql) { return Statement(*this, sql); }

int64_t Connection::last_insert_id() { return impl_->last_insert_id(); }

Statement::Statement(Connection& c, const std::string& sql) : impl_(c.impl().prepare(dialect_sql(c.dialect(), sql))) {}

Transaction::Transaction(Connection& c) : conn_(c) { conn_.impl().begin_write(); }

Transaction::~Transaction() {
  if (!done_) conn_.impl().rollback_quietly();
}

void Transaction::commit() {
  conn_.exec("COMMIT");
  done_ = true;
}

}  // namespace layoutx::db
