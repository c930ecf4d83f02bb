#include "cli/app_setup.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "support/error.h"

#ifndef LAYOUTX_VERSION
#define LAYOUTX_VERSION "unknown"
#endif

namespace layoutx::cli {

const char* version() { return LAYOUTX_VERSION; }

void add_version_flag(CLI::App& app) { app.set_version_flag("--version", std::string("layoutx ") + version()); }

namespace {

// CLI11's formatter, with an option's "Needs:" and "Excludes:" names in sorted order.
class StableHelp : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* opt) const override {
    std::string out = CLI::Formatter::make_option_opts(opt);
    if (!opt->get_option_text().empty() || (opt->get_needs().empty() && opt->get_excludes().empty())) return out;
    // CLI11 writes the two lists last, Needs before Excludes: cut them and write them again.
    const std::string first = " " + get_label(opt->get_needs().empty() ? "Excludes" : "Needs") + ":";
    const auto at = out.rfind(first);
    if (at == std::string::npos) return out;
    out.erase(at);
    auto names = [&](const auto& options, const char* label) {
      if (options.empty()) return;
      std::vector<std::string> sorted;
      for (const CLI::Option* o : options) sorted.push_back(o->get_name());
      std::sort(sorted.begin(), sorted.end());
      out += " " + get_label(label) + ":";
      for (const auto& n : sorted) out += " " + n;
    };
    names(opt->get_needs(), "Needs");
    names(opt->get_excludes(), "Excludes");
    return out;
  }
};

}  // namespace

void use_stable_help(CLI::App& app) { app.formatter(std::make_shared<StableHelp>()); }

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
