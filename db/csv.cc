#include "db/csv.h"

#include <charconv>
#include <cmath>

#include "support/error.h"

namespace layoutx::db {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string> split_csv_line(std::string_view line, const std::string& name, int line_no) {
  std::vector<std::string> out;
  size_t i = 0;
  const size_t n = line.size();
  while (true) {
    while (i < n && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::string field;
    if (i < n && line[i] == '"') {
      ++i;
      bool closed = false;
      while (i < n) {
        if (line[i] == '"') {
          if (i + 1 < n && line[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          closed = true;
          break;
        }
        field += line[i++];
      }
      if (!closed) throw Error(name + ":" + std::to_string(line_no) + ": unterminated quoted field");
      while (i < n && line[i] != ',') {
        if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
          throw Error(name + ":" + std::to_string(line_no) + ": text after a quoted field");
        ++i;
      }
    } else {
      size_t start = i;
      while (i < n && line[i] != ',') ++i;
      field = std::string(trim(line.substr(start, i - start)));
    }
    out.push_back(std::move(field));
    if (i >= n) break;
    ++i;  // the comma
  }
  return out;
}

bool LineReader::next(std::string_view& line) {
  if (pos_ >= text_.size()) return false;
  size_t end = text_.find('\n', pos_);
  if (end == std::string_view::npos) end = text_.size();
  line = text_.substr(pos_, end - pos_);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  pos_ = end + 1;
  ++line_no_;
  return true;
}

bool parse_double(std::string_view s, double& out) {
  s = trim(s);
  if (s.empty()) return false;
  if (s.front() == '+') s.remove_prefix(1);
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && std::isfinite(out);
}

bool parse_int64(std::string_view s, long long& out) {
  s = trim(s);
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace layoutx::db
