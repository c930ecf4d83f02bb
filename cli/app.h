// The layoutx command-line app, built and run in process: main() and the Python module
// (python/) both call run_layoutx, so both see the same verbs, flags, documents and messages.
#pragma once
#include <CLI/CLI.hpp>

#include <ostream>
#include <string>
#include <vector>

namespace layoutx::cli {

// Registers the verbs on `app` (one subcommand each) and requires exactly one: only the verb named
// `only` when it is one, else every verb.
void build_app(CLI::App& app, const std::string& only = "");

// Runs `layoutx ARGS...` (args without the program name) with the verbs' standard output sent
// to `out` and messages to `err`. Returns the exit status: 0 success, 1 a verb's negative
// finding (regress), 2 an error ("layoutx: error: <what>" on `err`, or CLI11's message for a
// bad flag). std::cout and std::cerr are redirected for the call, so it is not reentrant and
// not to be called from two threads at once.
int run_layoutx(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace layoutx::cli
