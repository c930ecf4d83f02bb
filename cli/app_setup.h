// What main() sets up around the verbs: --version, and the message for an unknown verb.
#pragma once
#include <CLI/CLI.hpp>

namespace layoutx::cli {

// The version string: the project VERSION from CMake, plus `git describe` at configure time
// when the source is a git checkout.
const char* version();

// Adds --version to the app.
void add_version_flag(CLI::App& app);

// Throws Error when argv's first non-option argument is not a verb of `app`, listing the verbs
// (CLI11 would say "A subcommand is required"). Returns normally when there is none (CLI11 then
// reports the missing verb itself).
void check_verb(const CLI::App& app, int argc, char** argv);

}  // namespace layoutx::cli
