// The one error type library code throws. Only main() turns it into an exit status.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

namespace layoutx {

// A user-facing error. The message already names the file, the line or key, and what is
// wrong (e.g. "configs/models/x.yaml:12:5: window: must be a positive integer, got -3").
// Several problems found in one pass are joined with newlines.
// Control characters from the input (a NUL or BEL byte in a CSV field or a YAML scalar) are
// spelled out ("\\0", "\\x07"): what() is a C string, so a raw NUL cut the message there (on
// stderr and in Python's layoutx.Error), and raw control bytes garble a terminal.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(visible_text(message)) {}
  // `text` with every control character but newline and tab, and DEL, as an escape.
  static std::string visible_text(const std::string& text);
};

// Collects every problem of one validation pass, then throws them together (ZigZag style:
// report all errors, not the first).
class ErrorList {
 public:
  void add(std::string message) { messages_.push_back(std::move(message)); }
  bool empty() const { return messages_.empty(); }
  const std::vector<std::string>& messages() const { return messages_; }
  // Throws Error with all collected messages, one per line, if any were collected.
  void throw_if_any() const;

 private:
  std::vector<std::string> messages_;
};

}  // namespace layoutx
