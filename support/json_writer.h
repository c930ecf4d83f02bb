// A small streaming JSON writer for the CLI's --json documents (no external JSON library:
// the project's dependencies are the Debian packages listed in the README).
#pragma once
#include <concepts>
#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace layoutx {

// Usage: JsonWriter w(out); w.begin_object(); w.key("a"); w.value(1); w.end_object();
// Commas and nesting are tracked; misuse (a value where a key is due) is a programming error.
class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out, bool pretty = true) : out_(out), pretty_(pretty) {}
  ~JsonWriter();

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);

  JsonWriter& value(std::string_view v);
  JsonWriter& value(const char* v) { return value(std::string_view(v)); }
  JsonWriter& value(const std::string& v) { return value(std::string_view(v)); }
  JsonWriter& value(bool v);
  JsonWriter& value(int v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(int64_t v);
  JsonWriter& value(uint64_t v);
  JsonWriter& value(double v);  // non-finite values are written as null
  JsonWriter& null();
  JsonWriter& value(std::span<const int64_t> v);
  JsonWriter& value(const std::vector<int64_t>& v) { return value(std::span<const int64_t>(v)); }
  // Any other contiguous run of int64 (a model::Shape).
  template <typename Ints>
    requires requires(const Ints& c) {
      { c.data() } -> std::convertible_to<const int64_t*>;
      c.size();
    }
  JsonWriter& value(const Ints& v) {
    return value(std::span<const int64_t>(v.data(), v.size()));
  }
  JsonWriter& value(const std::vector<double>& v);
  JsonWriter& value(const std::vector<std::string>& v);

  // Shorthand for key(k).value(v).
  template <typename T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }

  static std::string escape(std::string_view s);

 private:
  void before_value();
  void newline();
  std::ostream& out_;
  bool pretty_;
  struct Level {
    bool is_object;
    bool empty = true;
  };
  std::vector<Level> stack_;
  bool after_key_ = false;
};

}  // namespace layoutx
