#include "db/dialect.h"

#include <cctype>
#include <regex>

namespace layoutx::db {

bool is_postgres_target(const std::string& t) {
  return t.rfind("postgresql://", 0) == 0 || t.rfind("postgres://", 0) == 0;
}

std::string dialect_sql(Dialect d, const std::string& sql) {
  if (d == Dialect::kSqlite) return sql;
  // 1. Placeholders ?N -> $N, outside single-quoted literals.
  std::string out;
  out.reserve(sql.size() + 16);
  bool quoted = false;
  for (size_t i = 0; i < sql.size(); ++i) {
    const char ch = sql[i];
    if (ch == '\'') quoted = !quoted;
    if (!quoted && ch == '?' && i + 1 < sql.size() && std::isdigit(static_cast<unsigned char>(sql[i + 1]))) {
      out += '$';
      continue;
    }
    out += ch;
  }
  // 2. The schema's types (only DDL names them).
  if (out.find("CREATE TABLE") == std::string::npos && out.find("ADD COLUMN") == std::string::npos) return out;
  static const std::regex pk("\\bINTEGER PRIMARY KEY\\b"), integer("\\bINTEGER\\b"), real("\\bREAL\\b");
  out = std::regex_replace(out, pk, "BIGSERIAL PRIMARY KEY");
  out = std::regex_replace(out, integer, "BIGINT");
  out = std::regex_replace(out, real, "DOUBLE PRECISION");
  return out;
}

std::string table_exists_sql(Dialect d) {
  if (d == Dialect::kSqlite) return "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1";
  return "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?1";
}

std::string redact_connection_string(const std::string& target) {
  std::string s = target;
  // scheme://user:password@host -> scheme://user:***@host
  static const std::regex userinfo("^(postgres(?:ql)?://[^:/@?]*):[^@/?]*@");
  s = std::regex_replace(s, userinfo, "$1:***@");
  static const std::regex param("([?&]password=)[^&]*");
  s = std::regex_replace(s, param, "$1***");
  return s;
}

}  // namespace layoutx::db
