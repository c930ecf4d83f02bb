// One function per verb; each registers its subcommand and callback on the app.
#pragma once
#include <CLI/CLI.hpp>

namespace layoutx::cli {

void add_graph_verb(CLI::App& app);

}  // namespace layoutx::cli
