// layoutx propose: the whole-model layout to ship (explorer/proposal.h), beside the team's default
// and the best one made of forms known to compile; which axes carry the gain; every part.
#include <filesystem>
#include <iostream>
#include <optional>

#include "cli/choice_output.h"
#include "cli/fidelity_options.h"
#include "cli/flag_checks.h"
#include "cli/output_flags.h"
#include "cli/json_flag.h"
#include "cli/layout_spec.h"
#include "cli/measurement_words.h"
#include "cli/question_flags.h"
#include "cli/table.h"
#include "cli/verbs.h"
#include "emit/plan_bundles.h"
#include "explorer/layout_file.h"
#include "explorer/open_decisions.h"
#include "explorer/proposal.h"
#include "model/design_space.h"
#include "support/atomic_file.h"
#include "support/error.h"
#include "support/output_target.h"

namespace layoutx::cli {

namespace {

struct ProposeArgs {
  QuestionFlags question;  // --model, --device/--calibration/--db, --precision, --head-precision, --ctx
  FidelityOptions fidelity;
  int layers_per_part = -1;  // -1: searched
  std::vector<std::string> layouts, sets;  // --layout / --set: layer layouts fixed (not searched)
  std::string embed, head;  // --embed first|apart, --head last|apart: fixed; "" searched
  std::string kv_update = "in_place";
  std::string scope = "runner";
  std::string out;  // --out: the whole-model layout file
  int settle = 3;   // --settle: next's most valuable measurements of the proposal's layer choices
  std::string settle_out;  // --settle-out: their job bundles, plan.yaml and submit_all.sh
  bool force = false;      // --force: replace a non-empty --settle-out folder
  bool json = false;
};

// next's most valuable measurements of the proposal's layer choices, and (--settle-out) where each
// one's job bundle was written.
struct Settling {
  std::vector<explorer::PlannedMeasurement> plan;
  std::vector<std::string> bundles;
};

// The device's timings of each layout's layer graphs, where every type's graph was timed.
struct Measured {
  std::optional<explorer::MeasuredLayers> proposal, baseline, known_good;
};

// next's ranking of the measurements that would most change the proposal's layer choices.
std::vector<explorer::PlannedMeasurement> settling(ProposeArgs& a, const explorer::Proposal& r, const model::ModelSpec& m,
                                                   const costmodel::Predictor& predictor) {
  if (a.settle == 0) return {};
  explorer::PlanOptions options;
  options.already_timed = explorer::timed_graph_keys(a.question.predictor.device_timings(), m);
  auto plan = explorer::plan_measurements(predictor, explorer::proposal_decisions(r, m), options);
  if (plan.size() > static_cast<size_t>(a.settle)) plan.resize(static_cast<size_t>(a.settle));
  return plan;
}

void write_step_json(JsonWriter& w, const char* key, const explorer::ModelLayout& l, const explorer::ModelStep& s,
                     const std::optional<explorer::MeasuredLayers>& measured, const model::ModelSpec& m) {
  const model::AxisScope scope(m);
  w.key(key).begin_object();
  w.field("ms_per_token", s.ms);
  w.field("tokens_per_s", s.tokens_per_s);
  w.key("tokens_per_s_interval").value(std::vector<double>{s.tokens_low, s.tokens_high});
  w.key("interval_ms").value(std::vector<double>{s.low_ms, s.high_ms});
  w.field("floor_ms", s.floor_ms);
  w.field("efficiency", s.efficiency);
  w.field("graphs_ms", s.graphs_ms);
  w.key("host").begin_object();
  w.field("ms", s.host_ms);
  w.key("interval_ms").value(std::vector<double>{s.host_low_ms, s.host_high_ms});
  w.field("calls_ms", s.host_calls_ms);
  w.field("kv_update_ms", s.kv_update_ms);
  w.field("sampling_ms", s.sampling_ms);
  w.field("wakeup_ms", s.wakeup_ms);
  w.end_object();
  w.field("execute_ms", s.execute_ms);
  if (measured) {  // the device's sum of the same layer graphs, beside their prediction
    w.key("measured_layers").begin_object();
    w.field("ms", measured->measured_ms);
    w.field("predicted_ms", measured->predicted_ms);
    w.key("terms").begin_array();
    for (const auto& t : measured->terms) w.value(t);
    w.end_array();
    w.end_object();
  }
  w.key("layouts").begin_object();
  for (const auto& [t, v] : l.layers) w.field(model::to_string(t), v.key(scope));
  w.end_object();
  w.field("layers_per_part", l.layers_per_part);
  w.field("embed_in_first_part", l.embed_in_first);
  w.field("head_in_last_part", l.head_in_last);
  w.field("head_precision", model::to_string(l.head_precision));
  w.field("kv_update", explorer::to_string(l.kv_update));
  w.key("parts").begin_array();
  for (const auto& p : s.parts) {
    w.begin_object();
    w.field("name", p.name);
    w.key("layers").begin_array();
    for (int i : p.layers) w.value(i);
    w.end_array();
    w.field("embed", p.embed);
    w.field("head", p.head);
    w.field("weight_bytes", p.weight_bytes);
    w.field("io_bytes", p.io_bytes);
    w.field("ms", p.ms);
    w.key("interval_ms").value(std::vector<double>{p.low_ms, p.high_ms});
    w.field("pays_wakeup", p.pays_wakeup);
    w.end_object();
  }
  w.end_array();
  w.key("notes").begin_array();
  for (const auto& n : s.notes) w.value(n);
  w.end_array();
  w.end_object();
}

void print_json(const ProposeArgs& a, const explorer::Proposal& r, const Measured& measured, const model::ModelSpec& m,
                model::Precision p,
                const costmodel::Predictor& predictor, const Settling& settle) {
  JsonWriter w(std::cout);
  w.begin_object();
  w.field("model", m.name);
  w.field("precision", model::to_string(p));
  w.field("ctx", r.ctx);
  a.question.predictor.write_json_identity(w, predictor);
  w.field("scope", explorer::to_string(r.layout.scope));
  write_step_json(w, "proposal", r.layout, r.step, measured.proposal, m);
  write_step_json(w, "baseline", r.baseline_layout, r.baseline, measured.baseline, m);
  write_step_json(w, "known_good", r.known_good_layout, r.known_good, measured.known_good, m);
  w.field("known_good_differs", r.known_good_differs);
  w.key("fixed").begin_array();  // layer layouts the question fixed, with their legality
  for (const auto& f : r.fixed) w.value(f);
  w.end_array();
  w.field("speedup_vs_baseline", r.step.ms > 0 ? r.baseline.ms / r.step.ms : 0.0);
  w.key("gain_by_axis").begin_array();
  for (const auto& g : r.gains) {
    w.begin_object();
    w.field("axis", g.axis);
    w.field("from", g.from);
    w.field("to", g.to);
    w.field("delta_ms", g.delta_ms);
    w.end_object();
  }
  w.end_array();
  w.key("head_precision_alternatives").begin_array();
  for (const auto& [h, delta] : r.head_alternatives) {
    w.begin_object();
    w.field("head_precision", model::to_string(h));
    w.field("delta_ms", delta);
    w.end_object();
  }
  w.end_array();
  w.key("partition_at_prior_ends").begin_object();
  w.field("proposal", r.partition);
  w.field("low", r.partition_at_low);
  w.field("high", r.partition_at_high);
  w.end_object();
  w.field("partitions_priced", r.partitions_priced);
  w.field("partitions_refused", r.partitions_refused);
  if (!r.refused_example.empty()) w.field("refused_example", r.refused_example);
  if (!a.out.empty()) w.field("layout_file", a.out);
  w.key("settle").begin_array();
  for (size_t i = 0; i < settle.plan.size(); ++i) {
    const auto& t = settle.plan[i];
    w.begin_object();
    w.field("kind", explorer::to_string(t.kind));
    w.field("variant_key", t.variant.key(model::AxisScope(t.layer)));
    w.field("layer", model::to_string(t.layer.type));
    w.field("ctx", t.ctx);
    w.field("predicted_ms", t.predicted_ms);
    w.field("value_ms_per_step", t.value_ms);
    w.field("p_choice_changes", t.p_choice_changes);
    w.field("settles", settles(t));
    if (i < settle.bundles.size()) w.field("bundle", settle.bundles[i]);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

std::string interval(double lo, double hi, int decimals) { return "[" + fmt(lo, decimals) + ", " + fmt(hi, decimals) + "]"; }

// The heading and the three layouts' steps side by side, with the speed-up.
void print_steps(const ProposeArgs& a, const explorer::Proposal& r, const model::ModelSpec& m, model::Precision p,
                 const costmodel::Predictor& predictor) {
  std::cout << "layoutx propose: " << m.name << " at " << model::to_string(p) << ", ctx " << r.ctx << " on "
            << predictor.device() << " (calibration " << predictor.calibration_id() << ", " << a.question.predictor.source
            << "); " << (r.layout.scope == explorer::StepScope::kRunner ? "the runner end to end" : "graph execution only")
            << ", LM head " << model::to_string(r.layout.head_precision) << "\n\n";
  Table t({"", "ms/token", "interval ms", "tokens/s", "interval tokens/s", "floor ms", "efficiency", "binaries"});
  auto row = [&](const std::string& name, const explorer::ModelStep& s) {
    t.add({name, fmt(s.ms, 2), interval(s.low_ms, s.high_ms, 2), fmt(s.tokens_per_s, 1), interval(s.tokens_low, s.tokens_high, 1),
           fmt(s.floor_ms, 2), fmt(100 * s.efficiency, 0) + "%", std::to_string(s.parts.size())});
  };
  row("proposal", r.step);
  row("team default", r.baseline);
  if (r.known_good_differs) row("known-good only", r.known_good);
  t.print(std::cout);
  std::cout << "speed-up over the team default: " << fmt(r.baseline.ms / r.step.ms, 2) << "x (bounds summed as fully "
            << "correlated; the host terms carry their [low, high] priors)\n";
}

// The device's own sums where it timed every layer graph of a layout (graphs only, one a call).
void print_measured(const Measured& measured) {
  auto timed = [&](const char* name, const std::optional<explorer::MeasuredLayers>& x) {
    if (!x) return;
    std::cout << name << "'s layer graphs as the device timed them: " << fmt(x->measured_ms, 2) << " ms (";
    for (size_t i = 0; i < x->terms.size(); ++i) std::cout << (i ? " + " : "") << x->terms[i];
    std::cout << "), predicted " << fmt(x->predicted_ms, 2) << " ms for the same graphs (in sample: the calibration "
              << "was fitted to these timings)\n";
  };
  timed("the team default", measured.baseline);
  timed("the proposal", measured.proposal);
  if (!measured.proposal) std::cout << "the proposal's layer graphs: not all timed on the device\n";
}

// Gain by axis, then the proposal's parts, host time and LM head alternatives.
void print_gains_and_parts(const explorer::Proposal& r) {
  if (!r.gains.empty()) {
    std::cout << "\ngain by axis (from the team default, one axis at a time in this order):\n";
    Table g({"axis", "from", "to", "ms/token"});
    for (const auto& x : r.gains) g.add({x.axis, x.from, x.to, (x.delta_ms > 0 ? "+" : "") + fmt(x.delta_ms, 3)});
    g.print(std::cout);
  }
  const auto& s = r.step;
  std::cout << "\nthe proposal's parts (" << s.parts.size() << (s.parts.size() == 1 ? " context binary" : " context binaries")
            << "; one execute saved per merged graph: "
            << fmt(s.execute_ms, 3) << " ms):\n";
  Table parts({"part", "layers", "weights MB", "ms", "interval ms", "wake-up"});
  for (const auto& x : s.parts)
    parts.add({x.name, std::to_string(x.layers.size()), fmt(x.weight_bytes / 1e6, 1), fmt(x.ms, 3), interval(x.low_ms, x.high_ms, 3),
               x.pays_wakeup ? "yes" : "-"});
  parts.print(std::cout);
  if (s.host_ms > 0)
    std::cout << "host per token: " << fmt(s.host_ms, 3) << " ms " << interval(s.host_low_ms, s.host_high_ms, 3) << " = calls "
              << fmt(s.host_calls_ms, 3) << " + KV update " << fmt(s.kv_update_ms, 3) << " + sampling " << fmt(s.sampling_ms, 3)
              << " + wake-ups " << fmt(s.wakeup_ms, 3) << "\n";
  if (!r.head_alternatives.empty()) {
    std::cout << "the LM head (" << model::to_string(r.layout.head_precision) << ", the question's: its fidelity is not checked) at";
    for (size_t i = 0; i < r.head_alternatives.size(); ++i)
      std::cout << (i ? "," : "") << " " << model::to_string(r.head_alternatives[i].first) << " "
                << (r.head_alternatives[i].second > 0 ? "+" : "") << fmt(r.head_alternatives[i].second, 3) << " ms";
    std::cout << " a token (--head-precision)\n";
  }
}

// How firm the partition is (runtime priors at their ends), what the search priced, and the notes.
void print_partition_notes(const explorer::Proposal& r) {
  if (r.partition_at_low == r.partition && r.partition_at_high == r.partition)
    std::cout << "the partition is the same with the runtime priors at either end of their ranges\n";
  else
    std::cout << "the partition rests on the runtime priors: at their low ends " << r.partition_at_low << "; at their high ends "
              << r.partition_at_high << "\n";
  std::cout << "searched " << r.partitions_priced << " partitions, " << r.partitions_refused << " refused by the device's limits";
  if (!r.refused_example.empty()) std::cout << " (e.g. " << r.refused_example << ")";
  std::cout << "\n";
  for (const auto& n : r.fixed) std::cout << "note: " << n << "\n";
  for (const auto& n : r.step.notes) std::cout << "note: " << n << "\n";
}

// next's measurements that would settle the layer choices, and what was written.
void print_settling_and_files(const ProposeArgs& a, const Settling& settle) {
  if (!settle.plan.empty()) {
    std::cout << "\nthe measurements that would most change the proposal's layer choices (next's ranking; "
              << (settle.bundles.empty() ? "--settle-out DIR writes their job bundles" : "bundles in " + a.settle_out)
              << "):\n";
    Table n({"#", "kind", "layer", "variant", "predicted ms", "value ms/step", "P(change)", "settles"});
    for (size_t i = 0; i < settle.plan.size(); ++i) {
      const auto& t = settle.plan[i];
      n.add({std::to_string(i + 1), explorer::to_string(t.kind), model::to_string(t.layer.type),
             model_name(t.variant, t.layer), fmt(t.predicted_ms), fmt(t.value_ms, 4), fmt(t.p_choice_changes, 2),
             settles(t)});
    }
    n.print(std::cout);
  }
  if (!settle.bundles.empty()) {
    std::cout << "wrote " << a.settle_out << "/: plan.yaml, submit_all.sh";
    for (const auto& d : settle.bundles) std::cout << ", " << std::filesystem::path(d).filename().string() << "/";
    std::cout << "\n";
  }
  if (!a.out.empty()) std::cout << "wrote " << a.out << " (the whole-model layout file: `layoutx step --layout-file` prices it back)\n";
}

void print_text(const ProposeArgs& a, const explorer::Proposal& r, const Measured& measured, const model::ModelSpec& m,
                model::Precision p,
                const costmodel::Predictor& predictor, const Settling& settle) {
  print_steps(a, r, m, p, predictor);
  print_measured(measured);
  print_gains_and_parts(r);
  print_partition_notes(r);
  print_settling_and_files(a, settle);
  std::cout << "assumed, not measured: what joining graphs saves beyond the execute term (runtime.merge_saving_us, "
               "in the interval only; no multi-layer part of this device was timed); not priced: the LM head's fidelity\n";
}

}  // namespace

void add_propose_verb(CLI::App& app) {
  auto args = std::make_shared<ProposeArgs>();
  auto* sub = app.add_subcommand("propose", "the whole-model layout to ship: layer layouts and parts, beside the team's default");
  args->question.add_to(*sub, {.contexts = false, .head_precision = true, .prefix = ""});
  args->fidelity.add_to(*sub);
  sub->add_option("--layers-per-part", args->layers_per_part,
                  "decoder layers per context binary (default: every count from 1 to all is tried)")
      ->check(CLI::Range(1, 4096));
  sub->add_option("--layout", args->layouts,
                  "fix layer layouts instead of searching them: sliding=PRESET|KEY,full=PRESET|KEY (e.g. an exporter's)");
  sub->add_option("--set", args->sets, "fix one axis of one layer type's layout: TYPE.axis=value (repeatable)");
  sub->add_option("--embed", args->embed, "fix where the embedding gather runs: first (in the first part) or apart")
      ->check(CLI::IsMember({"first", "apart"}));
  sub->add_option("--head", args->head, "fix where the final norm and LM head run: last (in the last part) or apart")
      ->check(CLI::IsMember({"last", "apart"}));
  sub->add_option("--kv-update", args->kv_update, "the host's KV update for new-entry layers: in_place or shift")
      ->check(CLI::IsMember({"in_place", "shift"}));
  sub->add_option("--out", args->out, "write the whole-model layout file (the layout file with its model_layout block) here")
      ->check(output_file());
  sub->add_option("--settle", args->settle,
                  "list next's N most valuable measurements of the proposal's layer choices (0: none; they take seconds)")
      ->check(CLI::Range(0, 50));
  sub->add_option("--settle-out", args->settle_out,
                  "write those measurements' job bundles, plan.yaml and submit_all.sh here (a new or empty folder)")
      ->check(output_folder());
  add_force_flag(*sub, args->force, "--settle-out");
  sub->add_option("--scope", args->scope, "what a step's time includes: runner (end to end) or graphs (execution only)")
      ->check(CLI::IsMember({"runner", "graphs"}));
  sub->callback([args, sub] {
    args->json = json_requested(*sub);
    const QuestionFlags& q = args->question;
    model::ModelSpec m = q.load_model();
    const model::Precision p = q.layers_precision();
    q.check_contexts(m);
    if (!args->out.empty()) check_file_target(args->out, "--out");  // before any work
    if (!args->settle_out.empty() && args->settle == 0)
      throw Error("--settle-out " + args->settle_out + ": --settle 0 plans no measurements to bundle");
    std::optional<StagedFolder> folder;
    if (!args->settle_out.empty()) folder.emplace(args->settle_out, args->force, "--settle-out");
    auto predictor = args->question.predictor.load();
    auto fidelity = args->fidelity.load();
    explorer::Evaluator ev(*predictor, fidelity.get());
    explorer::ProposalOptions o;
    o.policy = args->fidelity.policy();
    if (args->layers_per_part > 0) o.layers_per_part = args->layers_per_part;
    o.head_precision = q.head(p);
    o.kv_update = explorer::parse_kv_update(args->kv_update, "--kv-update");
    if (!args->layouts.empty() || !args->sets.empty()) {
      const explorer::Assignment given = parse_assignment(m, p, args->layouts, args->sets);
      for (model::LayerType t : named_types(m, args->layouts, args->sets)) o.fixed_layers[t] = given.at(t);
    }
    if (!args->embed.empty()) o.embed_in_first = args->embed == "first";
    if (!args->head.empty()) o.head_in_last = args->head == "last";
    o.scope = explorer::parse_step_scope(args->scope, "--scope");
    const explorer::Proposal r = explorer::propose(ev, m, q.ctx, p, o, args->question.predictor.spec.runtime);
    Settling settle{settling(*args, r, m, *predictor), {}};
    if (folder) {  // the bundles first: a failure leaves neither them nor the layout file
      std::vector<emit::PlanBundleEntry> entries;
      for (const auto& t : settle.plan) entries.push_back({&t, model_name(t.variant, t.layer), settles(t)});
      for (const auto& w : emit::write_plan_bundles(folder->path(), entries, m, predictor->device(),
                                                    predictor->calibration_id(),
                                                    emit::device_bundle_options(args->question.predictor.spec), 1))
        settle.bundles.push_back((std::filesystem::path(args->settle_out) / w.dir).string());
    }
    if (!args->out.empty()) {
      explorer::LayoutFile f = explorer::make_layout_file(ev, m, q.ctx, r.layout.layers, o.policy.allow_untested);
      f.whole_model = explorer::model_record(r.layout, r.step);
      explorer::write_layout_file(f, args->out);
    }
    if (folder) folder->publish();
    const auto& timings = args->question.predictor.device_timings();
    const Measured measured{explorer::measured_layers(ev, m, q.ctx, r.layout.layers, timings),
                            explorer::measured_layers(ev, m, q.ctx, r.baseline_layout.layers, timings),
                            explorer::measured_layers(ev, m, q.ctx, r.known_good_layout.layers, timings)};
    if (args->json) print_json(*args, r, measured, m, p, *predictor, settle);
    else print_text(*args, r, measured, m, p, *predictor, settle);
  });
}

}  // namespace layoutx::cli
