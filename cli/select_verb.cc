// layoutx select: chooses each layer type's layout for a precision and context(s), composes the
// decode step beside its baselines, and writes the exporter's layout file.
#include <iostream>

#include "cli/choice_output.h"
#include "cli/fidelity_options.h"
#include "cli/flag_checks.h"
#include "cli/output_flags.h"
#include "model/limits.h"
#include "cli/predictor_options.h"
#include "cli/table.h"
#include "cli/verbs.h"
#include "explorer/layout_file.h"
#include "model/model_loader.h"
#include "support/atomic_file.h"
#include "support/error.h"

namespace layoutx::cli {

namespace {

struct SelectArgs {
  std::string model = model::kDefaultModel;
  PredictorOptions predictor;
  FidelityOptions fidelity;
  std::string precision = "w4a16";
  std::string head_precision;  // the LM head's; "" = precision
  std::vector<int> ctxs{4096};
  std::string out;
  bool candidates = false;
  bool json = false;
};

// Replaces "{ctx}" in an --out path.
std::string out_path(const std::string& pattern, int ctx) {
  std::string p = pattern;
  auto at = p.find("{ctx}");
  if (at != std::string::npos) p.replace(at, 5, std::to_string(ctx));
  return p;
}

void print_candidates(const explorer::Choice& c, const model::AxisScope& scope) {
  Table t({"candidate", "ms", "interval", "compiles", "fidelity", "changes", "P(faster)", "excluded because"});
  for (const auto& k : c.candidates) {
    const auto& p = k.eval.prediction;
    t.add({short_name(k.eval.variant, &scope), fmt(p.latency_ms), "[" + fmt(p.low_ms) + ", " + fmt(p.high_ms) + "]",
           costmodel::to_string(p.legality.compiles), k.eval.snr_db ? fmt(*k.eval.snr_db, 1) : "-",
           std::to_string(k.axis_changes), fmt(k.p_faster_than_chosen, 2), k.excluded_why});
  }
  std::cout << "\n" << model::to_string(c.layer) << " candidates:\n";
  t.print(std::cout);
}

}  // namespace

void add_select_verb(CLI::App& app) {
  auto args = std::make_shared<SelectArgs>();
  auto* sub = app.add_subcommand("select", "choose each layer type's layout and write the exporter's layout file");
  sub->add_option("--model", args->model, "model: a shipped name, a .yaml spec or a HF config.json")->capture_default_str();
  args->predictor.add_to(*sub);
  args->fidelity.add_to(*sub);
  sub->add_option("--precision", args->precision, "fp16, w8a16 or w4a16")->capture_default_str()->check(precision_name());
  sub->add_option("--head-precision", args->head_precision, "the LM head's precision in the whole step (default: --precision)")->check(precision_name());
  sub->add_option("--ctx", args->ctxs, "context length(s) in tokens (repeatable)")
      ->capture_default_str()
      ->check(integer_in(2, model::limits::kMaxContext));
  sub->add_option("--out", args->out, "write the layout file here ({ctx} is replaced by the context)")->check(output_file());
  sub->add_flag("--candidates", args->candidates, "also list every candidate with its prediction");
  sub->add_flag("--json", args->json, "print one JSON document");
  sub->callback([args] {
    // 1. The model, the precision and the cost model (device spec + its calibration).
    model::ModelSpec m = model::load_model(args->model);
    model::Precision p = model::parse_precision(args->precision);
    if (args->ctxs.size() > 1 && !args->out.empty() && args->out.find("{ctx}") == std::string::npos)
      throw Error("--out: several --ctx values need a {ctx} placeholder in the path, got " + args->out);
    for (int ctx : args->ctxs) m.check_context(ctx, "--ctx");  // the flag's error, before any work
    for (int ctx : args->ctxs)
      if (!args->out.empty()) check_file_target(out_path(args->out, ctx), "--out");  // before any work
    auto predictor = args->predictor.load();
    auto fidelity = args->fidelity.load();
    explorer::Evaluator ev(*predictor, fidelity.get());
    // 2. Per context: choose per layer type, compose the step beside its baselines.
    std::vector<explorer::ContextAnswer> answers;
    for (int ctx : args->ctxs) answers.push_back(explorer::answer_context(ev, m, ctx, p, explorer::same_policy(args->fidelity.policy())));
    const model::Precision head = head_precision_or(args->head_precision, p);
    if (head != p)
      for (explorer::ContextAnswer& a : answers) a.whole = explorer::whole_step(*predictor, m, a.comparison.step, head);
    // 3. Write the exporter's layout file(s).
    std::vector<std::string> written;
    if (!args->out.empty())
      for (const auto& a : answers) {
        explorer::Assignment chosen;
        for (const auto& c : a.choices) chosen[c.layer] = c.chosen.eval.variant;
        written.push_back(out_path(args->out, a.ctx));
        explorer::write_layout_file(explorer::make_layout_file(ev, m, a.ctx, chosen, args->fidelity.allow_untested),
                                    written.back());
      }
    // 4. Print.
    if (args->json) {
      JsonWriter w(std::cout);
      auto one = [&](const explorer::ContextAnswer& a, size_t i) {
        w.field("model", m.name);
        args->predictor.write_json_identity(w, *predictor);
        w.field("precision", model::to_string(p));
        w.field("ctx", a.ctx);
        w.key("choices").begin_array();
        for (const auto& c : a.choices) write_choice_json(w, c, model::AxisScope(m));
        w.end_array();
        write_comparison_json(w, a.comparison);
        write_whole_step_json(w, a.whole);
        if (i < written.size()) w.field("layout_file", written[i]);
        if (auto note = explorer::fidelity_skip_note(m, a.ctx, fidelity.get()); !note.empty()) w.field("fidelity_skipped", note);
        w.field("fidelity", args->fidelity.describe(fidelity.get()));
      };
      w.begin_object();
      if (answers.size() == 1) {
        one(answers[0], 0);
      } else {
        w.key("results").begin_array();
        for (size_t i = 0; i < answers.size(); ++i) {
          w.begin_object();
          one(answers[i], i);
          w.end_object();
        }
        w.end_array();
      }
      w.end_object();
      return;
    }
    std::cout << "layoutx select: " << m.name << " (" << m.count(model::LayerType::kSliding) << " sliding + "
              << m.count(model::LayerType::kFull) << " full) on " << predictor->device() << ", calibration "
              << predictor->calibration_id() << " (" << args->predictor.source << "), " << model::to_string(p) << "\n";
    std::cout << "fidelity: " << args->fidelity.describe(fidelity.get()) << "\n";
    for (size_t i = 0; i < answers.size(); ++i) {
      std::cout << "\nctx " << answers[i].ctx << "\n";
      const model::AxisScope scope(m);
      print_choices_table(std::cout, answers[i], &scope);
      if (auto note = explorer::fidelity_skip_note(m, answers[i].ctx, fidelity.get()); !note.empty()) std::cout << "  " << note << "\n";
      print_comparison_line(std::cout, answers[i].comparison);
      print_whole_step_line(std::cout, answers[i].whole);
      if (args->candidates)
        for (const auto& c : answers[i].choices) print_candidates(c, scope);
      if (i < written.size()) std::cout << "wrote " << written[i] << "\n";
    }
  });
}

}  // namespace layoutx::cli
