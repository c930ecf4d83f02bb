// layoutx whatif: a question in flags (--ctx 8192 --precision w8a16 --set sliding.returns=window
// --model X --set-model sliding_window=1024), answered side by side with the current choice.
#include <iostream>

#include "cli/choice_output.h"
#include "cli/flag_checks.h"
#include "cli/fidelity_options.h"
#include "cli/layout_spec.h"
#include "cli/question_flags.h"
#include "cli/table.h"
#include "cli/json_flag.h"
#include "cli/verbs.h"
#include "model/design_space.h"
#include "model/model_loader.h"
#include "support/error.h"

namespace layoutx::cli {

namespace {

struct WhatifArgs {
  // The current choice: the question's defaults unless told otherwise (--base-model, --device/
  // --calibration/--db, --base-precision, --base-ctx).
  QuestionFlags current;
  FidelityOptions fidelity;
  // The question: --model, --precision, --ctx, then --set and --set-model.
  QuestionChange change;
  std::vector<std::string> sets, set_model;
  bool json = false;
};

struct Scenario {
  model::ModelSpec model;
  model::Precision precision;
  int ctx;
  explorer::Policies policy;
  explorer::ContextAnswer answer;
};

void scenario_json(JsonWriter& w, const Scenario& s) {
  w.begin_object();
  w.field("model", s.model.name);
  w.field("precision", model::to_string(s.precision));
  w.field("ctx", s.ctx);
  if (s.model.sliding_window) w.field("sliding_window", *s.model.sliding_window);
  w.key("choices").begin_array();
  for (const auto& c : s.answer.choices) write_choice_json(w, c, model::AxisScope(s.model));
  w.end_array();
  write_comparison_json(w, s.answer.comparison);
  write_whole_step_json(w, s.answer.whole);
  w.end_object();
}

const explorer::Choice* find(const explorer::ContextAnswer& a, model::LayerType t) {
  for (const auto& c : a.choices)
    if (c.layer == t) return &c;
  return nullptr;
}

// --json: the current choice, the question and their difference.
void print_json(const WhatifArgs& args, const Scenario& cur, const Scenario& q, const costmodel::Predictor& predictor) {
  JsonWriter w(std::cout);
  w.begin_object();
  args.current.predictor.write_json_identity(w, predictor);
  w.key("current");
  scenario_json(w, cur);
  w.key("question");
  scenario_json(w, q);
  w.key("difference").begin_object();
  w.field("step_ms", q.answer.comparison.step.ms - cur.answer.comparison.step.ms);
  w.field("step_ratio", q.answer.comparison.step.ms / cur.answer.comparison.step.ms);
  w.field("all_full_ms", q.answer.comparison.all_full.ms - cur.answer.comparison.all_full.ms);
  w.end_object();
  w.end_object();
}

// The two answers side by side, with the difference.
void print_text(const WhatifArgs& args, const Scenario& cur, const Scenario& q, const costmodel::Predictor& predictor,
                const explorer::FidelityOracle* fidelity) {
  auto describe = [](const Scenario& s) {
    return s.model.name + ", " + model::to_string(s.precision) + ", ctx " + std::to_string(s.ctx) +
           (s.model.sliding_window ? ", window " + std::to_string(*s.model.sliding_window) : "");
  };
  std::cout << "current:  " << describe(cur) << "\nquestion: " << describe(q);
  for (const auto& s : args.sets) std::cout << ", " << s;
  for (const auto& s : args.set_model) std::cout << ", " << s;
  std::cout << "\n(" << predictor.device() << ", calibration " << predictor.calibration_id() << ", " << args.current.predictor.source << ")\n";
  for (const Scenario* s : {&cur, &q})
    if (auto note = explorer::fidelity_skip_note(s->model, s->ctx, fidelity); !note.empty())
      std::cout << (s == &cur ? "current: " : "question: ") << note << "\n";
  std::cout << "\n";
  Table t({"layer", "current", "ms", "n", "question", "ms", "n", "difference ms/layer"});
  for (auto type : {model::LayerType::kSliding, model::LayerType::kFull}) {
    const auto* a = find(cur.answer, type);
    const auto* b = find(q.answer, type);
    if (!a && !b) continue;
    auto n = [&](const Scenario& s) {
      return s.answer.comparison.step.layers.count(type) ? std::to_string(s.answer.comparison.step.layers.at(type)) : "0";
    };
    const model::AxisScope cur_scope(cur.model), q_scope(q.model);
    t.add({model::to_string(type), a ? short_name(a->chosen.eval.variant, &cur_scope) : "-",
           a ? fmt(a->chosen.eval.prediction.latency_ms) : "-", n(cur), b ? short_name(b->chosen.eval.variant, &q_scope) : "-",
           b ? fmt(b->chosen.eval.prediction.latency_ms) : "-", n(q),
           a && b ? fmt(b->chosen.eval.prediction.latency_ms - a->chosen.eval.prediction.latency_ms) : "-"});
  }
  t.print(std::cout);
  Table s({"", "current ms", "question ms", "difference"});
  auto row = [&](const char* name, double x, double y) {
    s.add({name, fmt(x), fmt(y), (y >= x ? "+" : "") + fmt(y - x) + " (" + fmt(100.0 * (y - x) / x, 1) + "%)"});
  };
  row("step", cur.answer.comparison.step.ms, q.answer.comparison.step.ms);
  row("all-full", cur.answer.comparison.all_full.ms, q.answer.comparison.all_full.ms);
  row("all-roll", cur.answer.comparison.all_roll.ms, q.answer.comparison.all_roll.ms);
  row("whole step (ms/token)", cur.answer.whole.ms, q.answer.whole.ms);
  row("  LM head", cur.answer.whole.lm_head_ms, q.answer.whole.lm_head_ms);
  row("tokens/s", cur.answer.whole.tokens_per_s, q.answer.whole.tokens_per_s);
  std::cout << "\n";
  s.print(std::cout);
  // A question that lets untested conversions win says which of its choices are untested.
  const model::AxisScope question_scope(q.model);
  for (const auto& c : q.answer.choices)
    if (c.chose_untested)
      std::cout << "question's " << model::to_string(c.layer) << " choice "
                << short_name(c.chosen.eval.variant, &question_scope)
                << " is untested: compiles " << costmodel::to_string(c.chosen.eval.prediction.legality.compiles)
                << (c.chosen.eval.prediction.legality.reasons.empty() ? "" : "; " + c.chosen.eval.prediction.legality.reasons[0])
                << "\n";
}

}  // namespace

void add_whatif_verb(CLI::App& app) {
  auto args = std::make_shared<WhatifArgs>();
  auto* sub = app.add_subcommand("whatif", "answer a question in flags side by side with the current choice");
  args->current.add_to(*sub, {.contexts = false, .head_precision = false, .prefix = "base-"});
  args->fidelity.add_to(*sub);
  args->change.add_to(*sub);
  sub->add_option("--set", args->sets, "question: force an axis of a layer type, TYPE.axis=value (repeatable)");
  sub->add_option("--set-model", args->set_model, "question: change a model field, key=value (repeatable)");
  sub->callback([args, sub] {
    args->json = json_requested(*sub);  // the one --json (cli/json_flag.h)
    // 1. The current choice's scenario (the shipped defaults) and the question's.
    const QuestionChange& change = args->change;
    Scenario cur{args->current.load_model(), args->current.layers_precision(), args->current.ctx, {}, {}};
    Scenario q{change.model.empty() ? cur.model : model::load_model(change.model),
               change.precision.empty() ? cur.precision : model::parse_precision(change.precision),
               change.ctx ? change.ctx : cur.ctx, {}, {}};
    for (const auto& kv : args->set_model) {
      auto eq = kv.find('=');
      if (eq == std::string::npos) throw Error("--set-model: expected key=value, got '" + kv + "'");
      model::set_model_field(q.model, kv.substr(0, eq), kv.substr(eq + 1));
    }
    // A context the model cannot take is the flag's error, before any work.
    args->current.check_contexts(cur.model);
    q.model.check_context(q.ctx, change.ctx ? "--ctx" : "--base-ctx");
    std::vector<explorer::ForcedAxis> forced;
    for (const auto& s : args->sets) {
      TypedSet ts = parse_typed_set(q.model, s);
      model::Variant named;
      named.set(ts.axis, ts.value);
      model::design_space().require_priced(named, "whatif --set " + s);
      forced.push_back({ts.type, ts.axis, ts.value});
    }
    // The current choice stays known-good; the question forces its axes.
    auto policies = explorer::whatif_policies(args->fidelity.policy(), forced);
    cur.policy = policies.current;
    q.policy = policies.question;
    // 2. Answer both with the same cost model (one evaluator: shared graphs are built once).
    auto predictor = args->current.predictor.load();
    auto fidelity = args->fidelity.load();
    explorer::Evaluator ev(*predictor, fidelity.get());
    cur.answer = explorer::answer_context(ev, cur.model, cur.ctx, cur.precision, cur.policy);
    q.answer = explorer::answer_context(ev, q.model, q.ctx, q.precision, q.policy);
    // 3. Print side by side with the difference.
    if (args->json) print_json(*args, cur, q, *predictor);
    else print_text(*args, cur, q, *predictor, fidelity.get());
  });
}

}  // namespace layoutx::cli
