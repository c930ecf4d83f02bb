#include "cli/app_setup.h"

#include <string>

#include "support/error.h"

#ifndef LAYOUTX_VERSION
#define LAYOUTX_VERSION "unknown"
#endif

namespace layoutx::cli {

const char* version() { return LAYOUTX_VERSION; }

void add_version_flag(CLI::App& app) { app.set_version_flag("--version", std::string("layoutx ") + version()); }

void check_verb(const CLI::App& app, const std::vector<std::string>& args) {
  const std::string first = args.empty() ? "" : args.front();
  if (!first.empty() && first[0] == '-') return;  // an option (--help, --version) comes first
  std::string verbs;
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == first) return;
    verbs += (verbs.empty() ? "" : ", ") + sub->get_name();
  }
  if (first.empty()) throw Error("no verb given (verbs: " + verbs + "; layoutx VERB --help for one)");
  throw Error("unknown verb '" + first + "' (verbs: " + verbs + "; layoutx VERB --help for one)");
}

}  // namespace layoutx::cli
