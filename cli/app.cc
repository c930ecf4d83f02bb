#include "cli/app.h"

#include <algorithm>
#include <cerrno>
#include <iterator>
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

void build_app(CLI::App& app, const std::string& only) {
  using Add = void (*)(CLI::App&);
  static const std::pair<const char*, Add> kVerbs[] = {
      {"graph", add_graph_verb},     {"emit", add_emit_verb},         {"measure", add_measure_verb},
      {"ingest", add_ingest_verb},   {"regress", add_regress_verb},   {"report", add_report_verb},
      {"parity", add_parity_verb},   {"predict", add_predict_verb},   {"calibrate", add_calibrate_verb},
      {"select", add_select_verb},   {"step", add_step_verb},         {"propose", add_propose_verb},
      {"public", add_public_verb},   {"whatif", add_whatif_verb},     {"next", add_next_verb},
  };
  app.require_subcommand(1);
  use_stable_help(app);  // before the verbs: each inherits its parent's formatter when added
  const bool one = std::any_of(std::begin(kVerbs), std::end(kVerbs), [&](const auto& v) { return only == v.first; });
  for (const auto& [name, add] : kVerbs)
    if (!one || only == name) add(app);
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
    // Only the verb asked for is built (the verbs' flag tables are most of the start-up); none
    // for --version; every verb when the first word is none of them (help, a typo: the message
    // lists them all).
    const std::string first = args.empty() ? "" : args.front();
    if (first != "--version") build_app(app, first);
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
