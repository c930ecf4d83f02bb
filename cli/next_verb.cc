// layoutx next: the measurements that would most improve the open decisions (select's, at the
// same precision and contexts), ranked by their expected value under the cost model's belief,
// with the device job bundles of the top N written into one folder.
#include <cmath>
#include <filesystem>
#include <iostream>

#include "cli/choice_output.h"
#include "cli/measurement_words.h"
#include "cli/fidelity_options.h"
#include "cli/flag_checks.h"
#include "cli/output_flags.h"
#include "cli/question_flags.h"
#include "cli/table.h"
#include "cli/json_flag.h"
#include "cli/verbs.h"
#include "costmodel/measurements.h"
#include "emit/plan_bundles.h"
#include "explorer/measurement_plan.h"
#include "explorer/open_decisions.h"
#include "model/builder.h"
#include "model/model_loader.h"
#include "support/atomic_file.h"
#include "support/error.h"
#include "support/json_writer.h"
#include "support/paths.h"

namespace layoutx::cli {

namespace {
namespace fs = std::filesystem;
using explorer::PlannedMeasurement;

struct NextArgs {
  QuestionFlags question;  // select's question: --model, --device/--calibration/--db, --precision, --ctx...
  FidelityOptions fidelity;
  int budget = 3;
  std::string out;
  bool force = false;  // --force: replace a non-empty --out folder
  uint64_t seed = 1;
  std::vector<std::string> whole_models;  // --whole-model: layout files ("exporters": the shipped ones)
  bool json = false;
};

// Which of the device's hypotheses a measurement would tell apart: the two kept hypotheses whose
// figures for what it observes differ most (a timing: the layer's latency; an op-level profile:
// the time of the class it pins), when they differ by more than twice its scatter
// (PlanOptions::timing_rel_sd of the latency, or share_sd of the layer's latency); "" otherwise,
// or when the model has no hypotheses.
std::string hypotheses_told_apart(const costmodel::Predictor& pr, const PlannedMeasurement& m) {
  const bool profile = m.kind == PlannedMeasurement::Kind::kOpProfile;
  if (pr.hypothesis_count() < 2 || (m.kind != PlannedMeasurement::Kind::kTiming && !profile)) return "";
  const auto each = pr.predict_each(model::build_layer_graph(m.layer, m.variant));
  auto observed = [&](const costmodel::HypothesisFigure& h) {
    if (!profile) return h.prediction.latency_ms;
    double ms = 0;
    for (const auto& op : h.prediction.ops) ms += op.op_class == m.profile_class ? op.ms : 0.0;
    return ms;
  };
  auto by = [&](const auto& a, const auto& b) { return observed(a) < observed(b); };
  auto lo = std::min_element(each.begin(), each.end(), by);
  auto hi = std::max_element(each.begin(), each.end(), by);
  const explorer::PlanOptions opt;
  const double noise = (profile ? opt.share_sd : opt.timing_rel_sd) * m.predicted_ms;
  if (observed(*hi) - observed(*lo) <= 2 * noise) return "";
  const std::string what = profile ? " ms of " + m.profile_class : " ms";
  return "; tells apart hypotheses " + lo->name + " (" + fmt(observed(*lo)) + what + ") and " + hi->name + " (" +
         fmt(observed(*hi)) + what + ")";
}


// What next planned, for printing.
struct Planned {
  const model::ModelSpec& model;
  model::Precision precision;
  const std::vector<PlannedMeasurement>& plan;  // every candidate, most valuable first
  const std::vector<PlannedMeasurement>& top;   // the first --budget
  const std::vector<std::string>& told;         // per top measurement: the hypotheses it tells apart
  const std::vector<emit::WrittenBundle>& written;          // with --out: each top measurement's bundle
  bool folder;                                  // --out was given (and written)
  const std::vector<PlannedMeasurement>& whole;  // --whole-model: each layout's timing, most valuable first
  const explorer::PlanOptions& options;          // what valued them
};

void print_json(const NextArgs& args, const Planned& r, const costmodel::Predictor& predictor) {
  const auto& [m, p, plan, top, told, written, folder, whole, options] = r;
  JsonWriter w(std::cout);
  w.begin_object();
  w.field("model", m.name);
  w.field("device", predictor.device());
  w.field("calibration_id", predictor.calibration_id());
  w.field("precision", model::to_string(p));
  w.field("candidate_measurements", static_cast<int64_t>(plan.size()));
  w.key("measurements").begin_array();
  for (size_t i = 0; i < top.size(); ++i) {
    const auto& t = top[i];
    w.begin_object();
    w.field("rank", static_cast<int64_t>(i + 1));
    w.field("kind", to_string(t.kind));
    w.field("variant_key", t.variant.key());
    w.field("name", model_name(t.variant, t.layer));
    w.field("layer", model::to_string(t.layer.type));
    w.field("ctx", t.ctx);
    w.field("predicted_ms", t.predicted_ms);
    w.field("value_ms_per_step", t.value_ms);
    w.field("p_choice_changes", t.p_choice_changes);
    if (t.kind == PlannedMeasurement::Kind::kOpProfile) {
      w.field("op_class", t.profile_class);
      w.field("op_class_ms", t.class_ms);
    }
    w.field("settles", settles(t) + told[i]);
    if (i < written.size()) w.field("bundle", (fs::path(args.out) / written[i].dir).string());
    w.end_object();
  }
  w.end_array();
  if (!args.whole_models.empty()) {
    w.key("whole_model_timings").begin_array();
    for (const auto& t : whole) {
      w.begin_object();
      w.field("layout_file", t.whole_model);
      w.field("ctx", t.ctx);
      w.field("predicted_ms", t.predicted_ms);
      w.field("value_ms_per_step", t.value_ms);
      w.field("p_choice_changes", t.p_choice_changes);
      w.field("settles", settles(t));
      w.end_object();
    }
    w.end_array();
  }
  if (folder) w.field("out", args.out);
  w.end_object();
}

// --whole-model: each layout's timing on the device, valued beside the decisions' own.
void print_whole_models(const std::vector<PlannedMeasurement>& whole, const explorer::PlanOptions& options) {
  std::cout << "\nwhole-model timings on the device (a layout file's model, its graphs as priced; scatter "
            << fmt(100 * std::hypot(options.timing_rel_sd, options.whole_model_rel_sd), 0)
            << "% for what the graphs leave out):\n";
  Table t({"layout file", "ctx", "predicted ms/token", "value ms/step", "P(change)", "settles"});
  for (const auto& w : whole)
    t.add({w.whole_model, std::to_string(w.ctx), fmt(w.predicted_ms), fmt(w.value_ms, 4), fmt(w.p_choice_changes, 2), settles(w)});
  t.print(std::cout);
}

void print_text(const NextArgs& args, const Planned& r, const costmodel::Predictor& predictor) {
  const auto& [m, p, plan, top, told, written, folder, whole, options] = r;
  std::cout << "layoutx next: " << m.name << " on " << predictor.device() << ", calibration "
            << predictor.calibration_id() << ", " << model::to_string(p) << "; " << plan.size()
            << " candidate measurements, the " << top.size() << " most valuable:\n"
            << "value: expected reduction of the decode step after the measurement, ms per step summed over the "
               "contexts asked (timings and op-level profiles of timed builds: knowledge gradient under the calibration's "
               "belief; compile-only: P(compiles) x the saving)\n\n";
  Table t({"#", "kind", "layer", "ctx", "variant", "predicted ms", "value ms/step", "P(change)", "settles"});
  for (size_t i = 0; i < top.size(); ++i)
    t.add({std::to_string(i + 1), to_string(top[i].kind), model::to_string(top[i].layer.type),
           std::to_string(top[i].ctx), model_name(top[i].variant, top[i].layer), fmt(top[i].predicted_ms),
           fmt(top[i].value_ms, 4), fmt(top[i].p_choice_changes, 2), settles(top[i]) + told[i]});
  t.print(std::cout);
  if (!args.whole_models.empty()) print_whole_models(whole, options);
  if (folder) {
    std::cout << "\nwrote " << args.out << "/: plan.yaml, submit_all.sh";
    for (const auto& w : written) std::cout << ", " << w.dir << "/";
    std::cout << "\n";
  }
}

}  // namespace

void add_next_verb(CLI::App& app) {
  auto args = std::make_shared<NextArgs>();
  auto* sub = app.add_subcommand("next", "rank the measurements that would most improve the open layout decisions");
  args->question.add_to(*sub, {.contexts = true, .head_precision = false, .prefix = ""});
  args->fidelity.add_to(*sub);
  sub->add_option("--budget", args->budget, "how many measurements to plan (and bundle with --out)")
      ->capture_default_str()
      ->check(integer_in(1, 1000));
  sub->add_option("--out", args->out, "write the top measurements' job bundles, plan.yaml and submit_all.sh here (a new or empty folder)")
      ->check(output_folder());
  add_force_flag(*sub, args->force, "--out");
  add_seed_option(*sub, args->seed, "the bundles' weights and calibration inputs");
  sub->add_option("--whole-model", args->whole_models,
                  "also value timing this whole-model layout file's model on the device (repeatable; `exporters`: every "
                  "exporter's layout in configs/layouts/exporters/, the public records' layouts)");
  sub->callback([args, sub] {
    args->json = json_requested(*sub);  // the one --json (cli/json_flag.h)
    // 1. The question, and the output folder checked before any work.
    const QuestionFlags& q = args->question;
    model::ModelSpec m = q.load_model();
    model::Precision p = q.layers_precision();
    std::optional<StagedFolder> folder;
    if (!args->out.empty()) folder.emplace(args->out, args->force, "--out");
    auto predictor = args->question.predictor.load();
    auto fidelity = args->fidelity.load();
    explorer::Evaluator ev(*predictor, fidelity.get());
    // 2. The open decisions: select's choices per context and layer type.
    std::vector<explorer::Decision> decisions = explorer::open_decisions(ev, m, q.ctxs, p, args->fidelity.policy());
    // 3. Rank every candidate measurement by its value (not proposing what the device's measurements timed).
    explorer::PlanOptions options;
    // Timed already: the device's measurement file, and the database's timings of it (--db).
    options.already_timed = explorer::timed_graph_keys(args->question.predictor.device_timings(), m);
    auto plan = explorer::plan_measurements(*predictor, decisions, options);
    if (static_cast<size_t>(args->budget) > plan.size())
      throw Error("--budget: " + std::to_string(args->budget) + " is more than the " + std::to_string(plan.size()) +
                  " candidate measurements of these decisions");
    std::vector<PlannedMeasurement> top(plan.begin(), plan.begin() + args->budget);
    std::vector<std::string> told;  // per top measurement: the hypotheses it tells apart, if any
    for (const auto& t : top) told.push_back(hypotheses_told_apart(*predictor, t));
    // ... and the whole-model timings asked for (their graphs priced without a fidelity check).
    std::vector<explorer::WholeModelCandidate> candidates;
    explorer::Evaluator plain(*predictor);
    for (const auto& w : args->whole_models)
      for (const auto& path : w == "exporters" ? explorer::shipped_exporter_layouts() : std::vector<std::string>{w}) try {
          candidates.push_back(explorer::whole_model_candidate(plain, path, args->question.predictor.spec.runtime));
        } catch (const Error& e) {
          throw Error(std::string("--whole-model: ") + e.what());
        }
    const auto whole = explorer::value_whole_models(*predictor, decisions, candidates, options);
    // 4. The bundles, built in a staging folder and published whole.
    std::vector<emit::WrittenBundle> written;
    if (folder) {
      std::vector<emit::PlanBundleEntry> entries;
      for (size_t i = 0; i < top.size(); ++i)
        entries.push_back({&top[i], model_name(top[i].variant, top[i].layer), settles(top[i]) + told[i]});
      written = emit::write_plan_bundles(folder->path(), entries, m, predictor->device(), predictor->calibration_id(),
                                         emit::device_bundle_options(args->question.predictor.spec), args->seed);
      folder->publish();
    }
    // 5. Print.
    const Planned r{m, p, plan, top, told, written, folder.has_value(), whole, options};
    if (args->json) print_json(*args, r, *predictor);
    else print_text(*args, r, *predictor);
  });
}

}  // namespace layoutx::cli
