// CSV lines as the profile tools write them: comma-separated, fields optionally double-quoted
// ("" inside quotes is a quote), spaces around fields ignored outside quotes.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace layoutx::db {

// Splits one line into fields, trimmed and unquoted. Throws Error "name:line: unterminated
// quoted field" for an open quote.
std::vector<std::string> split_csv_line(std::string_view line, const std::string& name, int line_no);

// Iterates the lines of a text (LF or CRLF), 1-based line numbers.
class LineReader {
 public:
  explicit LineReader(std::string_view text) : text_(text) {}
  bool next(std::string_view& line);
  int line_no() const { return line_no_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int line_no_ = 0;
};

// Parses a whole decimal number (no trailing junk, finite); false if it is not one.
bool parse_double(std::string_view s, double& out);
bool parse_int64(std::string_view s, long long& out);

std::string_view trim(std::string_view s);

}  // namespace layoutx::db
