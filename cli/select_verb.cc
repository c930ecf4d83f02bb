// layoutx select: chooses each layer type's layout for a precision and context(s), composes the
// decode step beside its baselines, and writes the exporter's layout file.
#include <iostream>

#include "cli/choice_output.h"
#include "cli/fidelity_options.h"
#include "cli/flag_checks.h"
#include "cli/output_flags.h"
#include "cli/question_flags.h"
#include "cli/table.h"
#include "cli/json_flag.h"
#include "cli/verbs.h"
#include "explorer/layout_file.h"
#include "model/model_loader.h"
#include "support/atomic_file.h"
#include "support/error.h"

namespace layoutx::cli {

namespace {

struct SelectArgs {
  QuestionFlags question;  // --model, --device/--calibration/--db, --precision, --head-precision, --ctx...
  FidelityOptions fidelity;
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

// What select answered, for printing.
struct Answered {
  const model::ModelSpec& model;
  model::Precision precision;
  const costmodel::Predictor& predictor;
  const explorer::FidelityOracle* fidelity;  // nullptr: --no-fidelity
  std::vector<explorer::ContextAnswer> answers;  // one per --ctx
  std::vector<std::string> written;  // with --out: the layout file of each answer
};

void print_json(const SelectArgs& a, const Answered& r) {
  JsonWriter w(std::cout);
  auto one = [&](const explorer::ContextAnswer& ans, size_t i) {
    w.field("model", r.model.name);
    a.question.predictor.write_json_identity(w, r.predictor);
    w.field("precision", model::to_string(r.precision));
    w.field("ctx", ans.ctx);
    w.key("choices").begin_array();
    for (const auto& c : ans.choices) write_choice_json(w, c, model::AxisScope(r.model));
    w.end_array();
    write_comparison_json(w, ans.comparison);
    write_whole_step_json(w, ans.whole);
    if (i < r.written.size()) w.field("layout_file", r.written[i]);
    if (auto note = explorer::fidelity_skip_note(r.model, ans.ctx, r.fidelity); !note.empty()) w.field("fidelity_skipped", note);
    w.field("fidelity", a.fidelity.describe(r.fidelity));
  };
  w.begin_object();
  if (r.answers.size() == 1) {
    one(r.answers[0], 0);
  } else {
    w.key("results").begin_array();
    for (size_t i = 0; i < r.answers.size(); ++i) {
      w.begin_object();
      one(r.answers[i], i);
      w.end_object();
    }
    w.end_array();
  }
  w.end_object();
}

void print_text(const SelectArgs& a, const Answered& r) {
  std::cout << "layoutx select: " << r.model.name << " (" << r.model.count(model::LayerType::kSliding) << " sliding + "
            << r.model.count(model::LayerType::kFull) << " full) on " << r.predictor.device() << ", calibration "
            << r.predictor.calibration_id() << " (" << a.question.predictor.source << "), " << model::to_string(r.precision) << "\n";
  std::cout << "fidelity: " << a.fidelity.describe(r.fidelity) << "\n";
  for (size_t i = 0; i < r.answers.size(); ++i) {
    std::cout << "\nctx " << r.answers[i].ctx << "\n";
    const model::AxisScope scope(r.model);
    print_choices_table(std::cout, r.answers[i], &scope);
    if (auto note = explorer::fidelity_skip_note(r.model, r.answers[i].ctx, r.fidelity); !note.empty()) std::cout << "  " << note << "\n";
    print_comparison_line(std::cout, r.answers[i].comparison);
    print_whole_step_line(std::cout, r.answers[i].whole);
    if (a.candidates)
      for (const auto& c : r.answers[i].choices) print_candidates(c, scope);
    if (i < r.written.size()) std::cout << "wrote " << r.written[i] << "\n";
  }
}

}  // namespace

void add_select_verb(CLI::App& app) {
  auto args = std::make_shared<SelectArgs>();
  auto* sub = app.add_subcommand("select", "choose each layer type's layout and write the exporter's layout file");
  args->question.add_to(*sub, {.contexts = true, .head_precision = true, .prefix = ""});
  args->fidelity.add_to(*sub);
  sub->add_option("--out", args->out, "write the layout file here ({ctx} is replaced by the context)")->check(output_file());
  sub->add_flag("--candidates", args->candidates, "also list every candidate with its prediction");
  sub->callback([args, sub] {
    args->json = json_requested(*sub);  // the one --json (cli/json_flag.h)
    // 1. The model, the precision and the cost model (device spec + its calibration).
    const QuestionFlags& q = args->question;
    model::ModelSpec m = q.load_model();
    model::Precision p = q.layers_precision();
    if (q.ctxs.size() > 1 && !args->out.empty() && args->out.find("{ctx}") == std::string::npos)
      throw Error("--out: several --ctx values need a {ctx} placeholder in the path, got " + args->out);
    q.check_contexts(m);  // the flag's error, before any work
    for (int ctx : q.ctxs)
      if (!args->out.empty()) check_file_target(out_path(args->out, ctx), "--out");  // before any work
    auto predictor = args->question.predictor.load();
    auto fidelity = args->fidelity.load();
    explorer::Evaluator ev(*predictor, fidelity.get());
    // 2. Per context: choose per layer type, compose the step beside its baselines.
    Answered r{m, p, *predictor, fidelity.get(), {}, {}};
    std::vector<explorer::ContextAnswer>& answers = r.answers;
    for (int ctx : q.ctxs) answers.push_back(explorer::answer_context(ev, m, ctx, p, explorer::same_policy(args->fidelity.policy())));
    const model::Precision head = q.head(p);
    if (head != p)
      for (explorer::ContextAnswer& a : answers) a.whole = explorer::whole_step(*predictor, m, a.comparison.step, head);
    // 3. Write the exporter's layout file(s).
    std::vector<std::string>& written = r.written;
    if (!args->out.empty())
      for (const auto& a : answers) {
        explorer::Assignment chosen;
        for (const auto& c : a.choices) chosen[c.layer] = c.chosen.eval.variant;
        written.push_back(out_path(args->out, a.ctx));
        explorer::write_layout_file(explorer::make_layout_file(ev, m, a.ctx, chosen, args->fidelity.allow_untested),
                                    written.back());
      }
    // 4. Print.
    if (args->json) print_json(*args, r);
    else print_text(*args, r);
  });
}

}  // namespace layoutx::cli
