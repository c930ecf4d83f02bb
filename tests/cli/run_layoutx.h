// Running the layoutx executable as a user would, for the CLI contract tests.
#pragma once
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace layoutx::test {

struct Result {
  int status = -1;
  std::string out;  // stdout and stderr together
};

inline Result layoutx(const std::string& args) {
  std::string cmd = std::string(LAYOUTX_BIN) + " " + args + " 2>&1";
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

inline bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

}  // namespace layoutx::test
