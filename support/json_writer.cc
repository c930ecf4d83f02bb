#include "support/json_writer.h"

#include <cmath>
#include <cstdio>

namespace layoutx {

JsonWriter::~JsonWriter() {
  if (pretty_ && stack_.empty()) out_.flush();
}

std::string JsonWriter::escape(std::string_view s) {
  std::string r;
  r.reserve(s.size() + 2);
  for (char c : s) {
    switch (c) {
      case '"': r += "\\\""; break;
      case '\\': r += "\\\\"; break;
      case '\n': r += "\\n"; break;
      case '\r': r += "\\r"; break;
      case '\t': r += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(c));
          r += buf;
        } else {
          r += c;
        }
    }
  }
  return r;
}

void JsonWriter::newline() {
  if (!pretty_) return;
  out_ << '\n';
  for (size_t i = 0; i < stack_.size(); ++i) out_ << "  ";
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!stack_.empty()) {
    if (!stack_.back().empty) out_ << ',';
    stack_.back().empty = false;
    newline();
  }
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_ << '{';
  stack_.push_back({true});
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  bool was_empty = stack_.back().empty;
  stack_.pop_back();
  if (!was_empty) newline();
  out_ << '}';
  if (stack_.empty() && pretty_) out_ << '\n';
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_ << '[';
  stack_.push_back({false});
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  bool was_empty = stack_.back().empty;
  stack_.pop_back();
  if (!was_empty) newline();
  out_ << ']';
  if (stack_.empty() && pretty_) out_ << '\n';
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view k) {
  if (!stack_.back().empty) out_ << ',';
  stack_.back().empty = false;
  newline();
  out_ << '"' << escape(k) << "\":" << (pretty_ ? " " : "");
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view v) {
  before_value();
  out_ << '"' << escape(v) << '"';
  return *this;
}

JsonWriter& JsonWriter::value(bool v) {
  before_value();
  out_ << (v ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::value(int64_t v) {
  before_value();
  out_ << v;
  return *this;
}

JsonWriter& JsonWriter::value(uint64_t v) {
  before_value();
  out_ << v;
  return *this;
}

JsonWriter& JsonWriter::value(double v) {
  before_value();
  if (!std::isfinite(v)) {
    out_ << "null";
    return *this;
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  out_ << buf;
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_ << "null";
  return *this;
}

JsonWriter& JsonWriter::value(std::span<const int64_t> v) {
  begin_array();
  bool saved = pretty_;
  pretty_ = false;
  for (auto x : v) value(x);
  end_array();
  pretty_ = saved;
  return *this;
}

JsonWriter& JsonWriter::value(const std::vector<double>& v) {
  begin_array();
  bool saved = pretty_;
  pretty_ = false;
  for (auto x : v) value(x);
  end_array();
  pretty_ = saved;
  return *this;
}

JsonWriter& JsonWriter::value(const std::vector<std::string>& v) {
  begin_array();
  for (const auto& x : v) value(x);
  end_array();
  return *this;
}

}  // namespace layoutx
