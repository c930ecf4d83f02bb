#include "cli/app.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>

#include "cli/app_setup.h"
#include "cli/error_boundary.h"
#include "cli/json_flag.h"
#include "cli/verbs.h"
#include "support/error.h"

namespace layoutx::cli {

int& verb_exit_status() {
  static int status = 0;
  return status;
}

void build_app(CLI::App& app) {
  app.require_subcommand(1);
  add_graph_verb(app);
  add_emit_verb(app);
  add_measure_verb(app);
  add_ingest_verb(app);
  add_regress_verb(app);
  add_report_verb(app);
  add_parity_verb(app);
  add_predict_verb(app);
  add_calibrate_verb(app);
  add_select_verb(app);
  add_step_verb(app);
  add_propose_verb(app);
  add_public_verb(app);
  add_whatif_verb(app);
  add_next_verb(app);
  // Every verb prints one JSON document with --json: the flag is registered here, once, last.
  for (CLI::App* verb : app.get_subcommands([](const CLI::App*) { return true; })) add_json_flag(*verb);
}

namespace {

// Points std::cout/std::cerr at other buffers for one scope (the verbs print to std::cout).
class StreamRedirect {
 public:
  StreamRedirect(std::ostream& out, std::ostream& err)
      : cout_(std::cout.rdbuf(out.rdbuf())), cerr_(std::cerr.rdbuf(err.rdbuf())) {}
  ~StreamRedirect() {
    std::cout.flush();
    std::cerr.flush();
    std::cout.rdbuf(cout_);
    std::cerr.rdbuf(cerr_);
  }
  StreamRedirect(const StreamRedirect&) = delete;
  StreamRedirect& operator=(const StreamRedirect&) = delete;

 private:
  std::streambuf* cout_;
  std::streambuf* cerr_;
};

// The one place the verbs' output is flushed: a write that failed (a full disk, a closed file)
// turns the run into an error naming standard output, never exit 0 with the output lost (a CI
// step redirecting --json to a full disk must fail). `real_stdout`: std::cout is the process's
// stdout, whose C buffer is flushed too (the default sync_with_stdio routes cout through it).
int checked_output(int status, bool real_stdout) {
  std::cout.flush();
  bool failed = !std::cout.good();
  int e = 0;
  if (real_stdout) {
    errno = 0;
    if (std::fflush(stdout) != 0) e = errno;  // the cause is known only when this flush fails
    failed = failed || e != 0 || std::ferror(stdout);
    std::clearerr(stdout);
  }
  std::cout.clear();  // an in-process caller's next run starts clean
  if (!failed) return status;
  std::cerr << "layoutx: error: standard output: write failed" << (e ? std::string(" (") + std::strerror(e) + ")" : "")
            << "; what was printed is incomplete\n";
  return 2;
}

}  // namespace

int run_layoutx(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const bool redirect = &out != &std::cout || &err != &std::cerr;
  std::optional<StreamRedirect> scope;
  if (redirect) scope.emplace(out, err);
  verb_exit_status() = 0;  // a previous in-process run may have set it
  std::cout.clear();
  // One error boundary (cli/error_boundary.h): whatever a verb throws is exit 2 with a message.
  const int status = run_guarded([&] {
    CLI::App app{"layoutx: design-space explorer and cost model for LLM decode steps on the Hexagon NPU", "layoutx"};
    add_version_flag(app);
    build_app(app);
    check_verb(app, args);
    // CLI11 parses from the last element backwards.
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    try {
      app.parse(reversed);
    } catch (const CLI::ParseError& e) {
      if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
      throw Error(std::string(e.what()) + " (see layoutx VERB --help)");
    }
    return verb_exit_status();
  });
  return checked_output(status, &out == &std::cout);
}

}  // namespace layoutx::cli
