// What main() sets up around the verbs: --version, and the message for an unknown verb.
#pragma once
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace layoutx::cli {

// The version string: the project VERSION from CMake, plus `git describe` at configure time
// when the source is a git checkout.
const char* version();

// Adds --version to the app.
void add_version_flag(CLI::App& app);

// Gives the app (and the verbs added after this call) a help formatter whose "Needs:" and
// "Excludes:" lists are sorted by name. CLI11 keeps them in sets of Option pointers, so its own
// order follows where the options were allocated: the same verb's help read differently when
// every verb was built (the Python module) than when only it was (the command line).
void use_stable_help(CLI::App& app);

// Throws Error, listing the verbs, when argv has no arguments or its first one is neither an
// option nor a verb of `app` (CLI11 would say "A subcommand is required").
void check_verb(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace layoutx::cli
