// Running the layoutx executable as a user does, for the CLI tests: its exit status, stdout and
// stderr (stderr through a private temporary file).
#pragma once
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/temp_dir.h"

namespace layoutx::test {

struct CliResult {
  int status = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `layoutx args` in `cwd` with `env` ("NAME=value ..." or "") before the command.
inline CliResult run_layoutx(const std::filesystem::path& cwd, const std::string& args, const std::string& env = "") {
  TempDir capture("cli-capture");
  const std::string err_file = capture / "stderr";
  std::string cmd = "cd '" + cwd.string() + "' && " + env + (env.empty() ? "" : " ") + LAYOUTX_BIN + " " + args +
                    " 2>'" + err_file + "'";
  CliResult r;
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream e(err_file);
  std::stringstream ss;
  ss << e.rdbuf();
  r.err = ss.str();
  return r;
}

inline bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

}  // namespace layoutx::test
