// The one error type library code throws. Only main() turns it into an exit status.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

namespace layoutx {

// A user-facing error. The message already names the file, the line or key, and what is
// wrong (e.g. "configs/models/x.yaml:12:5: window: must be a positive integer, got -3").
// Several problems found in one pass are joined with newlines.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
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
