// Many rows into one table with multi-row INSERTs (`VALUES (...), (...), ...`, both backends):
// one statement per kRowsPerStatement rows instead of one per row, which on PostgreSQL is one
// network round trip instead of hundreds. Rows go in the order added; call finish() to flush.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "db/connection.h"

namespace layoutx::db {

class BatchInsert {
 public:
  using Value = std::variant<std::monostate, int64_t, double, std::string>;  // monostate = NULL
  static constexpr size_t kRowsPerStatement = 200;

  // `head`: "INSERT INTO t (a, b, c)"; `columns`: how many values a row has.
  BatchInsert(Connection& c, std::string head, size_t columns);
  void add(std::vector<Value> row);  // exactly `columns` values
  void finish();                     // inserts what is buffered

  template <typename T>
  static Value opt(const std::optional<T>& v) {
    return v ? Value(static_cast<std::conditional_t<std::is_floating_point_v<T>, double, int64_t>>(*v)) : Value();
  }

 private:
  std::string sql(size_t rows) const;
  Connection& c_;
  std::string head_;
  size_t columns_;
  std::vector<Value> buffered_;
  std::unique_ptr<Statement> full_;  // the statement for a full batch, prepared once
};

}  // namespace layoutx::db
