// layoutx: the executable only wires the verbs; each verb reads as the pipeline it runs.
// Exit status: 0 success, 1 a verb's negative finding (e.g. regress found a regression),
// 2 an error (message on stderr naming the file, line or key, and what is wrong).
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/app_setup.h"
#include "cli/error_boundary.h"
#include "cli/verbs.h"
#include "support/error.h"

int& layoutx::cli::verb_exit_status() {
  static int status = 0;
  return status;
}

int main(int argc, char** argv) {
  return layoutx::cli::run_guarded([&] {
    CLI::App app{"layoutx: design-space explorer and cost model for LLM decode steps on the Hexagon NPU"};
    app.require_subcommand(1);
    layoutx::cli::add_version_flag(app);
    layoutx::cli::add_graph_verb(app);
    layoutx::cli::add_emit_verb(app);
    layoutx::cli::add_measure_verb(app);
    layoutx::cli::add_ingest_verb(app);
    layoutx::cli::add_regress_verb(app);
    layoutx::cli::add_report_verb(app);
    layoutx::cli::add_parity_verb(app);
    layoutx::cli::add_predict_verb(app);
    layoutx::cli::add_calibrate_verb(app);
    layoutx::cli::add_select_verb(app);
    layoutx::cli::add_step_verb(app);
    layoutx::cli::add_whatif_verb(app);
    layoutx::cli::check_verb(app, argc, argv);
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
      throw layoutx::Error(std::string(e.what()) + " (see layoutx VERB --help)");
    }
    return layoutx::cli::verb_exit_status();
  });
}
