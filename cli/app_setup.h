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

// Throws Error, listing the verbs, when argv has no arguments or its first one is neither an
// option nor a verb of `app` (CLI11 would say "A subcommand is required").
void check_verb(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace layoutx::cli
