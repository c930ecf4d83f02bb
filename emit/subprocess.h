// A child process with its stdin/stdout on pipes (POSIX fork/exec): how emit drives node.
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

namespace layoutx::emit {

class Subprocess {
 public:
  // Starts argv[0] (searched in PATH) with stdin/stdout piped to us and stderr to
  // `stderr_file`. Throws Error if it cannot start.
  Subprocess(const std::vector<std::string>& argv, const std::string& stderr_file);
  ~Subprocess();  // closes stdin and waits
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  void write_line(const std::string& line);
  // One line from the child's stdout without the newline; false at end of file.
  bool read_line(std::string& line);
  // Closes stdin, waits; the exit status (128 + signal if killed).
  int wait();

 private:
  pid_t pid_ = -1;
  int in_fd_ = -1, out_fd_ = -1;
  std::string buffer_;
  bool waited_ = false;
  int status_ = 0;
};

// Runs to completion with stdin from /dev/null; stdout and stderr captured (each truncated to
// 64 KiB). Returns the exit status (127 if the program is not found).
struct RunResult {
  int status = 0;
  std::string out, err;
};
RunResult run_command(const std::vector<std::string>& argv);

}  // namespace layoutx::emit
