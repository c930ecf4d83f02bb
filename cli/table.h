// Plain-text tables for the CLI: columns padded to their widest cell, numbers right-aligned.
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace layoutx::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// Number formatting helpers: fixed decimals; integers with thousands separators.
std::string fmt(double v, int decimals = 3);
std::string fmt_int(long long v);

}  // namespace layoutx::cli
