#include "db/batch_insert.h"

namespace layoutx::db {

BatchInsert::BatchInsert(Connection& c, std::string head, size_t columns)
    : c_(c), head_(std::move(head)), columns_(columns) {}

std::string BatchInsert::sql(size_t rows) const {
  std::string s = head_ + " VALUES ";
  int n = 1;
  for (size_t r = 0; r < rows; ++r) {
    s += r ? ", (" : "(";
    for (size_t k = 0; k < columns_; ++k) s += (k ? ", ?" : "?") + std::to_string(n++);
    s += ")";
  }
  return s;
}

void BatchInsert::add(std::vector<Value> row) {
  for (auto& v : row) buffered_.push_back(std::move(v));
  if (buffered_.size() == kRowsPerStatement * columns_) finish();
}

void BatchInsert::finish() {
  if (buffered_.empty()) return;
  const size_t rows = buffered_.size() / columns_;
  std::unique_ptr<Statement> partial;
  Statement* s;
  if (rows == kRowsPerStatement) {
    if (!full_) full_ = std::make_unique<Statement>(c_, sql(rows));
    s = full_.get();
  } else {
    partial = std::make_unique<Statement>(c_, sql(rows));
    s = partial.get();
  }
  for (size_t i = 0; i < buffered_.size(); ++i) {
    const int at = static_cast<int>(i + 1);
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::monostate>) s->bind_null(at);
          else s->bind(at, v);
        },
        buffered_[i]);
  }
  s->run();
  buffered_.clear();
}

}  // namespace layoutx::db
