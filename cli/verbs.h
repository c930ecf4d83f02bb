// One function per verb; each registers its subcommand and callback on the app.
#pragma once
#include <CLI/CLI.hpp>

namespace layoutx::cli {

// A verb's own exit status when it succeeded in running but reports a negative finding
// (regress: 1 when something regressed). main() returns it; errors are thrown as Error (exit 2).
int& verb_exit_status();

void add_graph_verb(CLI::App& app);
void add_emit_verb(CLI::App& app);
void add_measure_verb(CLI::App& app);
void add_ingest_verb(CLI::App& app);
void add_regress_verb(CLI::App& app);
void add_report_verb(CLI::App& app);
void add_parity_verb(CLI::App& app);
void add_predict_verb(CLI::App& app);
void add_calibrate_verb(CLI::App& app);
void add_select_verb(CLI::App& app);
void add_step_verb(CLI::App& app);
void add_whatif_verb(CLI::App& app);
void add_next_verb(CLI::App& app);
void add_propose_verb(CLI::App& app);
void add_public_verb(CLI::App& app);

}  // namespace layoutx::cli
