// Issue 31 item 5: the verbs' shared flag sets. --json is registered once (build_app adds it to
// every verb, last); the question's flags of select, step and next (and whatif's current choice) are
// one definition; regress and report share their database-query flags; emit and parity validate
// --layer-index by one rule with the same messages.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli/app.h"
#include "cli/json_flag.h"
#include "tests/cli/run_layoutx.h"
#include "tests/temp_dir.h"

namespace {

using layoutx::test::has;
using layoutx::test::layoutx;
using layoutx::test::Result;

std::vector<CLI::App*> verbs(CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

// The names of a verb's flags in registration order (the order `layoutx VERB --help` lists them).
std::vector<std::string> flag_names(const CLI::App& verb) {
  std::vector<std::string> names;
  for (const CLI::Option* o : verb.get_options())
    if (!o->get_lnames().empty()) names.push_back("--" + o->get_lnames().front());
  return names;
}

const CLI::Option* option(CLI::App& app, const std::string& verb, const std::string& flag) {
  return app.get_subcommand(verb)->get_option(flag);
}

TEST(FlagSets, EveryVerbHasTheOneJsonFlagLast) {
  CLI::App app;
  layoutx::cli::build_app(app);
  ASSERT_GE(verbs(app).size(), 13u);  // every verb of today, and any added later
  for (CLI::App* verb : verbs(app)) {
    const auto names = flag_names(*verb);
    EXPECT_EQ(std::count(names.begin(), names.end(), "--json"), 1) << verb->get_name();
    ASSERT_FALSE(names.empty());
    EXPECT_EQ(names.back(), layoutx::cli::kJsonFlag) << verb->get_name() << ": --json is not the last flag";
    EXPECT_EQ(verb->get_option("--json")->get_description(), layoutx::cli::kJsonHelp) << verb->get_name();
  }
}

// Start-up builds only the verb asked for (issue 32 item 13): the same subcommand, flags and all,
// as when every verb is built; a word that is no verb builds them all (the error lists them).
TEST(FlagSets, OnlyTheVerbAskedForIsBuiltAndItIsTheSameVerb) {
  CLI::App all, one, none;
  layoutx::cli::build_app(all);
  layoutx::cli::build_app(one, "select");
  layoutx::cli::build_app(none, "selec");
  ASSERT_EQ(verbs(one).size(), 1u);
  EXPECT_EQ(verbs(one)[0]->get_name(), "select");
  EXPECT_EQ(flag_names(*verbs(one)[0]), flag_names(*all.get_subcommand("select")));
  EXPECT_EQ(verbs(none).size(), verbs(all).size());
  Result v = layoutx("--version");
  EXPECT_EQ(v.status, 0) << v.out;
  EXPECT_EQ(v.out.rfind("layoutx ", 0), 0u) << v.out;
}

// A verb's help reads the same whether it was built alone (the command line) or with every verb
// (the Python module's docstrings): CLI11 keeps "Excludes:" in a set of pointers, whose order
// followed the allocator until the help's formatter sorted it (CI failed on `public`).
TEST(FlagSets, AVerbsHelpIsTheSameBuiltAloneOrWithEveryVerbAndItsListsAreSorted) {
  CLI::App all;
  layoutx::cli::build_app(all);
  int lists = 0;
  for (CLI::App* verb : verbs(all)) {
    CLI::App one;
    layoutx::cli::build_app(one, verb->get_name());
    const std::string help = verb->help();
    EXPECT_EQ(one.get_subcommand(verb->get_name())->help(), help) << verb->get_name();
    for (const CLI::Option* o : verb->get_options()) {
      if (o->get_excludes().empty()) continue;
      ++lists;
      const auto formatter = std::dynamic_pointer_cast<CLI::Formatter>(verb->get_formatter());
      ASSERT_NE(formatter, nullptr) << verb->get_name();
      const std::string line = formatter->make_option_opts(o);
      std::vector<std::string> names;
      for (auto at = line.find(" --"); at != std::string::npos; at = line.find(" --", at + 1))
        names.push_back(line.substr(at + 1, line.find(' ', at + 1) - at - 1));
      EXPECT_EQ(names.size(), o->get_excludes().size()) << verb->get_name() << ": " << line;
      EXPECT_TRUE(std::is_sorted(names.begin(), names.end())) << verb->get_name() << ": " << line;
    }
  }
  EXPECT_GE(lists, 5);  // public's --joint/--ratios/--by-hypothesis, --calibration/--db, calibrate's
}

// The flag the plumbing registers is the one the verb reads: --json changes what a verb prints.
TEST(FlagSets, JsonThroughTheOneRegistrationReachesTheVerb) {
  for (const char* verb : {"graph --layer full", "predict --layer sliding", "step --ctx 2048",
                           "whatif --no-fidelity --precision w8a16", "select --no-fidelity --ctx 1024"}) {
    Result text = layoutx(verb);
    Result json = layoutx(std::string(verb) + " --json");
    ASSERT_EQ(text.status, 0) << verb << "\n" << text.out;
    ASSERT_EQ(json.status, 0) << verb << "\n" << json.out;
    EXPECT_NE(text.out.substr(0, 1), "{") << verb;
    EXPECT_EQ(json.out.substr(0, 1), "{") << verb << "\n" << json.out.substr(0, 200);
  }
  Result twice = layoutx("graph --json --json");
  EXPECT_EQ(twice.status, 0) << twice.out;  // a flag given twice, as CLI11 allows for flags
}

// select, step and next ask the same question in the same words, in the same order.
TEST(FlagSets, TheQuestionsFlagsAreOneDefinition) {
  CLI::App app;
  layoutx::cli::build_app(app);
  const std::vector<std::string> order = {"--model", "--device", "--calibration", "--db", "--evidence", "--precision"};
  for (const char* verb : {"select", "step", "next"}) {
    const auto names = flag_names(*app.get_subcommand(verb));
    auto at = std::find(names.begin(), names.end(), "--model");
    ASSERT_NE(at, names.end()) << verb;
    ASSERT_GE(names.end() - at, static_cast<long>(order.size())) << verb;
    EXPECT_EQ(std::vector<std::string>(at, at + order.size()), order) << verb;
    for (const char* flag : {"--model", "--device", "--calibration", "--db", "--evidence", "--precision"}) {
      EXPECT_EQ(option(app, verb, flag)->get_description(), option(app, "select", flag)->get_description()) << verb << flag;
      EXPECT_EQ(option(app, verb, flag)->get_default_str(), option(app, "select", flag)->get_default_str()) << verb << flag;
    }
  }
  // Several contexts (select, next) or one (step).
  EXPECT_EQ(option(app, "next", "--ctx")->get_description(), option(app, "select", "--ctx")->get_description());
  EXPECT_EQ(option(app, "next", "--ctx")->get_default_str(), option(app, "select", "--ctx")->get_default_str());
  EXPECT_EQ(option(app, "step", "--head-precision")->get_description(), option(app, "select", "--head-precision")->get_description());
  // whatif's current choice: the same defaults under --base-*.
  for (const std::string flag : {"model", "precision"})
    EXPECT_EQ(option(app, "whatif", "--base-" + flag)->get_default_str(), option(app, "select", "--" + flag)->get_default_str());
  EXPECT_EQ(option(app, "whatif", "--base-ctx")->get_default_str(), option(app, "step", "--ctx")->get_default_str());
  EXPECT_EQ(option(app, "whatif", "--device")->get_default_str(), option(app, "select", "--device")->get_default_str());
}

TEST(FlagSets, RegressAndReportShareTheDatabaseQueryFlags) {
  CLI::App app;
  layoutx::cli::build_app(app);
  for (const char* flag : {"--db", "--device", "--model"})
    EXPECT_EQ(option(app, "regress", flag)->get_description(), option(app, "report", flag)->get_description()) << flag;
  layoutx::test::TempDir d("db-flags");
  const std::string db = (d.path() / "m.db").string();
  ASSERT_EQ(layoutx("ingest " + std::string(LAYOUTX_CONFIG_DIR) + "/calibration/spark-s25-measurements.yaml --db " + db).status, 0);
  for (const char* verb : {"regress", "report"}) {
    Result r = layoutx(std::string(verb) + " --db " + db + " --device no-such-phone");
    EXPECT_EQ(r.status, 2) << verb << "\n" << r.out;
    EXPECT_TRUE(has(r.out, "no-such-phone")) << verb << "\n" << r.out;
    Result missing = layoutx(std::string(verb) + " --db " + (d.path() / "absent.db").string());
    EXPECT_EQ(missing.status, 2) << verb << "\n" << missing.out;
  }
}

// One --layer-index rule for emit and parity: the same checks, the same words, exit 2.
TEST(FlagSets, LayerIndexIsValidatedIdenticallyByEmitAndParity) {
  layoutx::test::TempDir d("layer-index");
  const std::string emit = "emit --calibration-samples 1 --out " + (d.path() / "out").string();
  const std::string ckpt = (d.path() / "absent.safetensors").string();
  struct Case {
    std::string flags, message;
  };
  // spark-x2.5-1.7b: layer i is full when (i + 1) % 4 == 0, so layer 3 is full, 4 sliding.
  const std::vector<Case> cases = {
      {"--layer-index 3", "layoutx: error: --layer-index needs --weights"},
      {"--weights " + ckpt + " --layer-index 3", "layoutx: error: --layer-index 3: not a sliding layer of spark-x2.5-1.7b"},
      {"--layer full --weights " + ckpt + " --layer-index 4", "layoutx: error: --layer-index 4: not a full layer of spark-x2.5-1.7b"},
      {"--weights " + ckpt + " --layer-index 28", "layoutx: error: --layer-index 28: not a sliding layer of spark-x2.5-1.7b"},
      {"--layer-index 1024", "layoutx: error: --layer-index: must be an integer in [0, 1023], got '1024'"},
      {"--layer-index -1", "--layer-index"},
      // --weights alone: the first layer of the type, for both (so the checkpoint is what is missing).
      {"--weights " + ckpt, "layoutx: error: " + ckpt + ": cannot open the safetensors file"},
  };
  for (const Case& c : cases)
    for (const std::string& verb : {emit, std::string("parity")}) {
      Result r = layoutx(verb + " " + c.flags);
      EXPECT_EQ(r.status, 2) << verb << " " << c.flags << "\n" << r.out;
      EXPECT_TRUE(has(r.out, c.message)) << verb << " " << c.flags << "\n" << r.out;
    }
  EXPECT_FALSE(std::filesystem::exists(d.path() / "out")) << "emit wrote its folder despite a bad --layer-index";
}

}  // namespace
