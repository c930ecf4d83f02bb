// The short form of tests/cli/cli_run.h for tests that only look for text: `layoutx ARGS` in the
// current folder, its exit status, and stdout followed by stderr in one string.
#pragma once
#include <filesystem>
#include <string>

#include "tests/cli/cli_run.h"

namespace layoutx::test {

struct Result {
  int status = -1;
  std::string out;  // stdout, then stderr
};

inline Result layoutx(const std::string& args) {
  CliResult r = run_layoutx(std::filesystem::current_path(), args);
  return {r.status, r.out + r.err};
}

}  // namespace layoutx::test
