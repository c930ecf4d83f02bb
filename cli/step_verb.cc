// layoutx step: the composed decode step for given per-type layouts at a context, beside the
// all-full and all-roll baselines; --sweep-ctx LO:HI sweeps contexts and finds the crossover,
// --plot draws it.
#include <iostream>

#include "model/design_space.h"
#include "cli/choice_output.h"
#include "cli/flag_checks.h"
#include "cli/layout_spec.h"
#include "cli/plot.h"
#include "cli/question_flags.h"
#include "cli/table.h"
#include "cli/output_flags.h"
#include "cli/json_flag.h"
#include "cli/verbs.h"
#include "explorer/layout_file.h"
#include "explorer/model_layout.h"
#include "model/design_space.h"
#include "model/limits.h"
#include "model/model_loader.h"
#include "support/atomic_file.h"
#include "support/error.h"

namespace layoutx::cli {

namespace {

struct StepArgs {
  QuestionFlags question;  // --model, --device/--calibration/--db, --precision, --head-precision, --ctx
  std::vector<std::string> layouts;
  std::vector<std::string> sets;
  std::string sweep_ctx;
  std::string plot;
  std::string layout_file;  // --layout-file: a whole-model layout file (propose --out)
  bool json = false;
};

std::pair<int, int> parse_range(const std::string& s) {
  auto colon = s.find(':');
  try {
    if (colon == std::string::npos) throw std::invalid_argument("");
    // Read in 64 bits, checked before narrowing.
    size_t used_lo = 0, used_hi = 0;
    const std::string a = s.substr(0, colon), b = s.substr(colon + 1);
    long long lo = std::stoll(a, &used_lo);
    long long hi = std::stoll(b, &used_hi);
    if (used_lo != a.size() || used_hi != b.size() || lo < 2 || hi < lo || hi > model::limits::kMaxContext)
      throw std::invalid_argument("");
    return {static_cast<int>(lo), static_cast<int>(hi)};
  } catch (const std::exception&) {
    throw Error("--sweep-ctx: expected LO:HI with 2 <= LO <= HI <= " + std::to_string(model::limits::kMaxContext) +
                ", got '" + s + "'");
  }
}

// The JSON document's model, precision and predictor identity; the layout of each layer type.
void write_json_head(JsonWriter& w, const StepArgs& args, const model::ModelSpec& m, model::Precision p,
                     const costmodel::Predictor& predictor) {
  w.field("model", m.name);
  w.field("precision", model::to_string(p));
  args.question.predictor.write_json_identity(w, predictor);
}
void write_json_layouts(JsonWriter& w, const explorer::Assignment& a, const model::ModelSpec& m) {
  w.key("layouts").begin_object();
  for (const auto& [t, v] : a) w.field(model::to_string(t), v.key(model::AxisScope(m)));
  w.end_object();
}

// One context: the step composed and compared with the baselines, printed.
void one_context(const StepArgs& args, explorer::Evaluator& ev, const model::ModelSpec& m, model::Precision p,
                 const explorer::Assignment& a, const costmodel::Predictor& predictor) {
  const QuestionFlags& q = args.question;
  explorer::Comparison c = explorer::compare(ev, m, q.ctx, a);
  const explorer::WholeStep whole = explorer::whole_step(predictor, m, c.step, q.head(p));
  if (args.json) {
    JsonWriter w(std::cout);
    w.begin_object();
    write_json_head(w, args, m, p, predictor);
    w.field("ctx", q.ctx);
    write_json_layouts(w, a, m);
    write_comparison_json(w, c);
    write_whole_step_json(w, whole);
    w.end_object();
    return;
  }
  std::cout << m.name << " at " << model::to_string(p) << ", ctx " << q.ctx << " on " << predictor.device() << " (calibration "
            << predictor.calibration_id() << ", " << args.question.predictor.source << ")\n\n";
  Table t({"layer", "n", "layout", "ms per layer", "ms total"});
  for (const auto& [type, v] : a) {
    if (!c.step.layers.count(type)) continue;
    int n = c.step.layers.at(type);
    const model::AxisScope scope(m);
    t.add({model::to_string(type), std::to_string(n), short_name(v, &scope), fmt(c.step.per_layer_ms.at(type)),
           fmt(n * c.step.per_layer_ms.at(type))});
  }
  t.print(std::cout);
  print_comparison_line(std::cout, c);
  std::cout << "interval: " << explorer::kStepIntervalRule << "\n";
  print_whole_step_line(std::cout, whole);
}

// A sweep: the step composed at each context, where the hybrid starts to beat all-full, printed.
void sweep_contexts(const StepArgs& args, explorer::Evaluator& ev, const model::ModelSpec& m, model::Precision p,
                    const explorer::Assignment& a, const costmodel::Predictor& predictor) {
  const QuestionFlags& q = args.question;
  auto [lo, hi] = parse_range(args.sweep_ctx);
  explorer::Sweep s = explorer::sweep(ev, m, lo, hi, [&](int) { return a; });
  if (!args.plot.empty()) plot_sweep(s, m.name + ", " + model::to_string(p) + ", " + predictor.device(), args.plot);
  if (args.json) {
    JsonWriter w(std::cout);
    w.begin_object();
    write_json_head(w, args, m, p, predictor);
    write_json_layouts(w, a, m);
    w.key("points").begin_array();
    for (const auto& pt : s.points) {
      w.begin_object();
      w.field("ctx", pt.ctx);
      w.field("step_ms", pt.hybrid_ms);
      w.field("all_full_ms", pt.all_full_ms);
      w.field("speedup_vs_all_full", pt.all_full_ms / pt.hybrid_ms);
      w.end_object();
    }
    w.end_array();
    if (s.crossover_ctx) w.field("crossover_ctx", *s.crossover_ctx);
    else w.key("crossover_ctx").null();
    explorer::Comparison c = explorer::compare(ev, m, q.ctx, a);
    w.field("ctx", q.ctx);
    write_comparison_json(w, c);
    if (!args.plot.empty()) w.field("plot", args.plot);
    w.end_object();
    return;
  }
  std::cout << m.name << " at " << model::to_string(p) << " on " << predictor.device() << " (calibration " << predictor.calibration_id() << ", "
            << args.question.predictor.source << ")\n\n";
  Table t({"ctx", "hybrid ms", "all-full ms", "speedup"});
  for (const auto& pt : s.points)
    t.add({std::to_string(pt.ctx), fmt(pt.hybrid_ms), fmt(pt.all_full_ms), fmt(pt.all_full_ms / pt.hybrid_ms, 3)});
  t.print(std::cout);
  if (m.count(model::LayerType::kSliding) == 0)
    std::cout << "crossover: none, " << m.name << " has no sliding layers (the step is all-full attention)\n";
  else if (s.crossover_ctx)
    std::cout << "crossover: the hybrid is faster than all-full from ctx " << *s.crossover_ctx << "\n";
  else
    std::cout << "crossover: the hybrid does not beat all-full between " << lo << " and " << hi << "\n";
  if (!args.plot.empty()) std::cout << "wrote " << args.plot << "\n";
}

// A whole-model layout file (propose --out): its layer layouts, parts and host terms priced
// at its own context and precision.
// `model_given`: --model names the spec; else the file's model (beside it, or shipped).
void whole_model(StepArgs& args, bool model_given) {
  const QuestionFlags& q = args.question;
  const explorer::LayoutFile f = explorer::read_layout_file(args.layout_file);
  const model::ModelSpec m = model_given ? q.load_model() : explorer::layout_file_model(f, args.layout_file);
  // A form not priced yet (an exporter's single-head attention) is priced as its default, which
  // the step's notes say (explorer::price_members).
  const explorer::ModelLayout l = explorer::model_layout_of(f, m, args.layout_file);
  auto predictor = args.question.predictor.load();
  explorer::Evaluator ev(*predictor);
  const explorer::ModelStep s = explorer::price_model(ev, m, f.context, l, args.question.predictor.spec.runtime);
  if (args.json) {
    JsonWriter w(std::cout);
    w.begin_object();
    write_json_head(w, args, m, f.precision, *predictor);
    w.field("ctx", f.context);
    w.field("layout_file", args.layout_file);
    write_json_layouts(w, l.layers, m);
    w.key("whole_step").begin_object();
    w.field("ms_per_token", s.ms);
    w.key("interval_ms").value(std::vector<double>{s.low_ms, s.high_ms});
    w.field("tokens_per_s", s.tokens_per_s);
    w.key("tokens_per_s_interval").value(std::vector<double>{s.tokens_low, s.tokens_high});
    w.field("floor_ms", s.floor_ms);
    w.field("graphs_ms", s.graphs_ms);
    w.field("host_ms", s.host_ms);
    w.field("parts", static_cast<int64_t>(s.parts.size()));
    w.field("scope", explorer::to_string(l.scope));
    w.field("head_precision", model::to_string(l.head_precision));
    w.field("written_ms_per_token", f.whole_model->ms_per_token);
    w.key("notes").begin_array();  // what the figure approximates or leaves out
    for (const auto& n : s.notes) w.value(n);
    w.end_array();
    w.end_object();
    w.end_object();
    return;
  }
  std::cout << m.name << " at " << model::to_string(f.precision) << ", ctx " << f.context << " on " << predictor->device()
            << " (calibration " << predictor->calibration_id() << ", " << args.question.predictor.source << "): "
            << args.layout_file << "\n\n";
  Table t({"part", "layers", "weights MB", "ms"});
  for (const auto& p : s.parts) t.add({p.name, std::to_string(p.layers.size()), fmt(p.weight_bytes / 1e6, 1), fmt(p.ms)});
  t.print(std::cout);
  std::cout << "whole step " << fmt(s.ms) << " ms/token [" << fmt(s.low_ms) << ", " << fmt(s.high_ms) << "] = "
            << fmt(s.tokens_per_s, 1) << " tokens/s [" << fmt(s.tokens_low, 1) << ", " << fmt(s.tokens_high, 1) << "]   ("
            << (l.scope == explorer::StepScope::kRunner ? "the runner end to end" : "graph execution only") << "; graphs "
            << fmt(s.graphs_ms) << " ms, host " << fmt(s.host_ms) << " ms; the file said " << fmt(f.whole_model->ms_per_token)
            << " ms)\n";
  for (const auto& n : s.notes) std::cout << "note: " << n << "\n";
}

}  // namespace

void add_step_verb(CLI::App& app) {
  auto args = std::make_shared<StepArgs>();
  auto* sub = app.add_subcommand("step", "compose the decode step for given per-type layouts, beside the baselines");
  args->question.add_to(*sub, {.contexts = false, .head_precision = true, .prefix = ""});
  sub->add_option("--layout", args->layouts,
                  "per-type layouts: sliding=PRESET|KEY,full=PRESET|KEY (default: the incumbent, sliding=roll,full=ring)");
  sub->add_option("--set", args->sets, "change one axis of one layer type: TYPE.axis=value (repeatable)");
  sub->add_option("--sweep-ctx", args->sweep_ctx, "sweep contexts LO:HI and find the crossover with all-full");
  sub->add_option("--plot", args->plot, "with --sweep-ctx: draw the sweep to this PNG (gnuplot)")->check(output_file());
  sub->add_option("--layout-file", args->layout_file,
                  "price a whole-model layout file (propose --out) at its context and precision: parts, host, tokens/s "
                  "(not with --layout, --set, --sweep-ctx, --plot, --ctx, --precision or --head-precision)")
      ->check(CLI::ExistingFile);
  sub->callback([args, sub] {
    args->json = json_requested(*sub);  // the one --json (cli/json_flag.h)
    if (!args->layout_file.empty()) {
      // The file says the layouts, the context and the precisions. (Checked here rather than with
      // CLI11's excludes, whose help lists several options in an order that varies by run.)
      for (const char* other : {"--layout", "--set", "--sweep-ctx", "--plot", "--ctx", "--precision", "--head-precision"})
        if (sub->get_option(other)->count() > 0) throw Error(std::string("--layout-file: the file gives what ") + other + " would");
      return whole_model(*args, sub->get_option("--model")->count() > 0);
    }
    // 0. Flags that only make sense together, and the output target, before any work.
    if (!args->plot.empty() && args->sweep_ctx.empty())
      throw Error("--plot: draws the context sweep, so it needs --sweep-ctx LO:HI");
    if (!args->sweep_ctx.empty()) parse_range(args->sweep_ctx);
    if (!args->plot.empty()) check_file_target(args->plot, "--plot");
    // 1. Model, cost model, and the per-type layouts (presets or keys, then --set, then precision).
    const QuestionFlags& q = args->question;
    model::ModelSpec m = q.load_model();
    model::Precision p = q.layers_precision();
    explorer::Assignment a = parse_assignment(m, p, args->layouts, args->sets);
    // A context the model cannot take is the flag's error (not the "ctx" of a model field).
    if (!args->sweep_ctx.empty()) m.check_context(parse_range(args->sweep_ctx).first, "--sweep-ctx");
    q.check_contexts(m);
    for (const auto& [type, v] : a) model::design_space().require_priced(v, std::string("step: ") + model::to_string(type));
    auto predictor = args->question.predictor.load();
    explorer::Evaluator ev(*predictor);
    // 2. One context, or a sweep of them; 3. print.
    if (args->sweep_ctx.empty()) one_context(*args, ev, m, p, a, *predictor);
    else sweep_contexts(*args, ev, m, p, a, *predictor);
  });
}

}  // namespace layoutx::cli
