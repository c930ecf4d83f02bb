// --json, registered once: build_app (cli/app.h) adds it to every verb after the verb's own flags,
// so every verb has the same flag, the same help line, and lists it last in `layoutx VERB --help`.
// A verb's callback asks json_requested(its subcommand) instead of binding a flag of its own.
#pragma once
#include <CLI/CLI.hpp>

namespace layoutx::cli {

inline constexpr const char* kJsonFlag = "--json";
inline constexpr const char* kJsonHelp = "print one JSON document";

// Adds --json to `verb`. Called by build_app for each verb; a verb never calls it.
void add_json_flag(CLI::App& verb);

// Whether --json was given to `verb` (false when the verb has no --json: build_app was not used).
bool json_requested(const CLI::App& verb);

}  // namespace layoutx::cli
