// layoutx public: the public decode timings (configs/public/, issue 36) against the device's
// predictions: each record layoutx can express on the device's chip priced as a whole-model step,
// beside its published figure; what it cannot express, and why.
#include <algorithm>
#include <iostream>
#include <map>
#include <vector>

#include "cli/flag_checks.h"
#include "cli/json_flag.h"
#include "cli/predictor_options.h"
#include "cli/public_joint_output.h"
#include "cli/public_ratios_output.h"
#include "cli/table.h"
#include "cli/verbs.h"
#include "costmodel/public_records.h"
#include "explorer/evaluator.h"
#include "explorer/public_joint.h"
#include "explorer/public_layouts.h"
#include "explorer/public_shapes.h"
#include "support/json_writer.h"
#include "support/paths.h"

namespace layoutx::cli {

namespace {

struct PublicArgs {
  PredictorOptions predictor;
  std::string file;  // --file; "" : the shipped copy
  bool all = false;  // --all: list every record not priced with its reason
  bool by_hypothesis = false;  // --by-hypothesis: the records priced by each hypothesis alone
  bool joint = false;          // --joint: the joint calibration over the team's timings and the records
  bool ratios = false;         // --ratios: ratios within one source's per-graph timings
  explorer::JointPriors priors;  // --chip-prior-sd, --exporter-prior-sd
  bool json = false;
};

std::string published(const explorer::PublicCheck& c) {
  return (c.record->kind == costmodel::PublicKind::kDecodeFloor ? "<= " : "") + fmt(c.published_ms, 2);
}

void write_summary(JsonWriter& w, const char* key, const explorer::PublicSummary& s) {
  w.key(key).begin_object();
  w.field("decode_rates", static_cast<int64_t>(s.errors.size()));
  if (!s.errors.empty()) {
    w.field("median_abs_error", s.median_abs_error);
    w.field("median_error", s.median_error);
  }
  w.field("floors", s.floors);
  w.field("floors_kept", s.kept);
  w.field("floors_kept_at_low", s.kept_at_low);
  w.end_object();
}

void print_json(const PublicArgs& a, const costmodel::PublicTimings& t, const std::vector<explorer::PublicCheck>& checks,
                const explorer::PublicSummary& s, const explorer::PublicSummary& others, const std::vector<explorer::ChipFactor>& factors,
                const costmodel::Predictor& predictor) {
  JsonWriter w(std::cout);
  w.begin_object();
  w.field("file", t.path);
  a.predictor.write_json_identity(w, predictor);
  w.field("records", static_cast<int64_t>(t.records.size()));
  w.key("checks").begin_array();
  for (const auto& c : checks) {
    const auto& r = *c.record;
    w.begin_object();
    w.field("key", r.key);
    w.field("kind", costmodel::to_string(r.kind));
    w.field("use", costmodel::to_string(r.use));
    w.field("chip", r.chip);
    w.field("includes", costmodel::to_string(r.includes));
    w.field("priced", c.priced);
    if (c.priced) {
      w.field("published_ms_per_token", c.published_ms);
      w.field("predicted_ms_per_token", c.predicted_ms);
      w.key("interval_ms").value(std::vector<double>{c.low_ms, c.high_ms});
      w.field("device_ms_per_token", c.device_ms);
      w.field("chip_factor_prior", c.chip_factor);
      w.field("parts", c.parts);
      if (r.kind == costmodel::PublicKind::kDecodeFloor) {
        w.field("bound_kept", c.bound_kept);
        w.field("bound_kept_at_low", c.bound_kept_at_low);
      } else {
        w.field("error", c.error);
      }
      w.key("approximations").begin_array();
      for (const auto& x : c.approximations) w.value(x);
      w.end_array();
    } else {
      w.field("why_not", c.why_not);
    }
    w.field("source", r.cited);
    w.end_object();
  }
  w.end_array();
  write_summary(w, "summary", s);
  write_summary(w, "other_chips", others);
  w.key("chip_factors").begin_array();
  for (const auto& f : factors) {
    w.begin_object();
    w.field("chip", f.chip);
    w.field("prior", f.prior);
    w.field("decode_rates", f.rates);
    if (f.rates > 0) {
      w.field("median", f.median);
      w.key("range").value(std::vector<double>{f.low, f.high});
    }
    w.field("floors", f.floors);
    if (f.bound) w.field("at_most", *f.bound);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

void print_summary(const std::string& what, const explorer::PublicSummary& s) {
  if (!s.errors.empty())
    std::cout << what << " decode rates: " << s.errors.size() << ", median |error| " << fmt(100 * s.median_abs_error, 0)
              << "%, median error " << (s.median_error > 0 ? "+" : "") << fmt(100 * s.median_error, 0)
              << "% (positive: layoutx predicts slower than published)\n";
  if (s.floors > 0)
    std::cout << what << " CI floors (predicted ms/token <= 1000 / floor): " << s.kept << " of " << s.floors
              << " kept at the prediction, " << s.kept_at_low << " at its interval's low end\n";
}

void print_text(const PublicArgs& a, const costmodel::PublicTimings& t, const std::vector<explorer::PublicCheck>& checks,
                const explorer::PublicSummary& s, const explorer::PublicSummary& others, const std::vector<explorer::ChipFactor>& factors,
                const costmodel::Predictor& predictor, const std::string& chip) {
  int priced = 0;
  for (const auto& c : checks) priced += c.priced;
  std::cout << "layoutx public: " << t.records.size() << " records of " << t.path << "; " << priced << " priced on "
            << predictor.device() << " (" << chip << "), calibration " << predictor.calibration_id() << " ("
            << a.predictor.source << ")\n\n";
  Table tab({"record", "chip", "use", "includes", "published ms", "predicted ms", "interval ms", "error / bound", "parts",
             "approx."});
  for (const auto& c : checks) {
    if (!c.priced) continue;
    const bool floor = c.record->kind == costmodel::PublicKind::kDecodeFloor;
    tab.add({c.record->key, c.record->chip + (c.record->chip == chip ? "" : " x" + fmt(c.chip_factor, 2)),
             costmodel::to_string(c.record->use), costmodel::to_string(c.record->includes), published(c),
             fmt(c.predicted_ms, 2), "[" + fmt(c.low_ms, 2) + ", " + fmt(c.high_ms, 2) + "]",
             floor ? (c.bound_kept ? "kept" : c.bound_kept_at_low ? "kept at low end" : "broken")
                   : (c.error > 0 ? "+" : "") + fmt(100 * c.error, 0) + "%",
             std::to_string(c.parts), std::to_string(c.approximations.size())});
  }
  tab.print(std::cout);
  std::cout << "\n";
  print_summary("on " + chip + ":", s);
  print_summary("other chips (through each chip's prior factor):", others);
  if (!factors.empty()) {
    std::cout << "\nchip factors (the chip's time for 1 ms on " << chip << "; prior: the DRAM peaks' ratio):\n";
    Table f({"chip", "prior", "decode rates", "the rates say", "range", "floors", "the floors allow at most"});
    for (const auto& x : factors)
      f.add({x.chip, fmt(x.prior, 2), std::to_string(x.rates), x.rates ? fmt(x.median, 2) : "-",
             x.rates ? "[" + fmt(x.low, 2) + ", " + fmt(x.high, 2) + "]" : "-", std::to_string(x.floors),
             x.bound ? fmt(*x.bound, 2) : "-"});
    f.print(std::cout);
  }
  // Why the rest is not priced, by reason.
  std::map<std::string, int> reasons;
  for (const auto& c : checks)
    if (!c.priced) ++reasons[c.why_not.substr(0, c.why_not.find(": "))];
  std::cout << "\nnot priced: " << checks.size() - priced << " records";
  for (const auto& [why, n] : reasons) std::cout << "; " << why << ": " << n;
  std::cout << (a.all ? "" : " (--all lists them)") << "\n";
  if (a.all)
    for (const auto& c : checks)
      if (!c.priced) std::cout << "  " << c.record->key << ": " << c.why_not << "\n";
  std::cout << "approximations: --json lists each record's (where layoutx's layout is not the published one)\n";
}

// --by-hypothesis: every hypothesis, most weighted first.
void print_hypotheses(std::vector<explorer::HypothesisPublicFit> fits, const std::string& chip, bool json) {
  std::stable_sort(fits.begin(), fits.end(), [](const auto& x, const auto& y) { return x.weight > y.weight; });
  if (json) {
    JsonWriter w(std::cout);
    w.begin_object();
    w.key("hypotheses").begin_array();
    for (const auto& f : fits) {
      w.begin_object();
      w.field("name", f.name);
      w.field("weight", f.weight);
      w.field("log_likelihood", f.log_likelihood);
      w.field("weight_with_public", f.weight_with_public);
      write_summary(w, "own_chip", f.own);
      write_summary(w, "other_chips", f.others);
      w.end_object();
    }
    w.end_array();
    w.end_object();
    return;
  }
  std::cout << "the public records priced by each hypothesis alone (weight: from the team's timings; with " << chip
            << "'s records: times their likelihood, export spread " << fmt(explorer::kExportSpread, 2)
            << "); on " << chip << ": decode rates' median error and floors kept; other chips: median error through the "
               "DRAM prior (not in the weights)\n\n";
  Table t({"hypothesis", "weight", "with " + chip + " records", chip + " median error", "median |error|", "floors kept",
           "other chips median error"});
  auto pct = [](double x) { return (x > 0 ? "+" : "") + fmt(100 * x, 0) + "%"; };
  for (const auto& f : fits)
    t.add({f.name, fmt(f.weight, 3), fmt(f.weight_with_public, 3), f.own.errors.empty() ? "-" : pct(f.own.median_error),
           f.own.errors.empty() ? "-" : fmt(100 * f.own.median_abs_error, 0) + "%",
           std::to_string(f.own.kept) + " of " + std::to_string(f.own.floors),
           f.others.errors.empty() ? "-" : pct(f.others.median_error)});
  t.print(std::cout);
}

}  // namespace

void add_public_verb(CLI::App& app) {
  auto a = std::make_shared<PublicArgs>();
  auto* sub = app.add_subcommand("public", "the public decode timings against the device's predictions");
  a->predictor.add_to(*sub);
  sub->add_option("--file", a->file, "the public timings file (default: configs/public/public-snapdragon-timings.yaml)")
      ->check(CLI::ExistingFile);
  sub->add_flag("--all", a->all, "list every record that is not priced, with why");
  sub->add_flag("--by-hypothesis", a->by_hypothesis,
                "what the records say of each of the device's hypotheses: each one's errors beside its weight");
  sub->add_flag("--joint", a->joint,
                "the joint calibration: the hypotheses weighed by the team's timings and the records, a factor per "
                "chip and a term per exporter, each record and publication left out")
      ->excludes("--by-hypothesis");
  sub->add_flag("--ratios", a->ratios,
                "ratios within one source's per-graph timings (a part's time over another's, at several contexts): "
                "published beside predicted, where the chip's factor and the exporter's term cancel")
      ->excludes("--by-hypothesis")
      ->excludes("--joint");
  sub->add_option("--chip-prior-sd", a->priors.chip_log_sd,
                  "--joint: the prior's log-sd of a chip's factor around the DRAM peaks' ratio")
      ->check(CLI::Range(0.01, 5.0))
      ->capture_default_str();
  sub->add_option("--exporter-prior-sd", a->priors.source_log_sd,
                  "--joint: the prior's log-sd of an exporter's term around 1")
      ->check(CLI::Range(0.01, 5.0))
      ->capture_default_str();
  sub->callback([a, sub] {
    a->json = json_requested(*sub);
    const auto t = costmodel::read_public_timings(a->file.empty() ? costmodel::shipped_public_timings() : a->file);
    if (a->joint || a->by_hypothesis) {
      if (a->predictor.evidence == "all")
        throw Error(std::string(a->joint ? "--joint" : "--by-hypothesis") +
                    ": weighs the team's hypotheses by the records itself; drop --evidence all");
      a->predictor.evidence = "team";
    }
    auto predictor = a->predictor.load();
    const std::string chip = explorer::public_chip(a->predictor.spec);
    if (a->by_hypothesis) {
      if (predictor->hypothesis_count() == 0)
        throw Error("--by-hypothesis: " + a->predictor.source + " is one calibration, not a mixture of hypotheses");
      return print_hypotheses(explorer::public_fit_by_hypothesis(*predictor, t, a->predictor.spec.runtime, chip), chip,
                              a->json);
    }
    if (a->joint)
      return print_public_joint(explorer::fit_public_joint(*predictor, t, a->predictor.spec.runtime, chip, a->priors), chip,
                                a->predictor.source, a->json);
    if (a->ratios)
      return print_public_ratios(explorer::public_shape_ratios(*predictor, t, a->predictor.spec.runtime, chip), chip,
                                 a->predictor.source, a->json);
    explorer::Evaluator ev(*predictor);
    const auto checks = explorer::check_public_records(ev, t, a->predictor.spec.runtime, chip);
    const explorer::PublicSummary s = explorer::summarize_public(checks, chip, true),
                                  others = explorer::summarize_public(checks, chip, false);
    const auto factors = explorer::chip_factors(checks, chip);
    if (a->json) print_json(*a, t, checks, s, others, factors, *predictor);
    else print_text(*a, t, checks, s, others, factors, *predictor, chip);
  });
}

}  // namespace layoutx::cli
