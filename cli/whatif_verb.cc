// layoutx whatif: a question in flags (--ctx 8192 --precision w8a16 --set sliding.returns=window
// --model X --set-model sliding_window=1024), answered side by side with the current choice.
#include <iostream>

#include "cli/choice_output.h"
#include "cli/flag_checks.h"
#include "cli/fidelity_options.h"
#include "cli/layout_spec.h"
#include "cli/predictor_options.h"
#include "cli/table.h"
#include "cli/verbs.h"
#include "model/design_space.h"
#include "model/limits.h"
#include "model/model_loader.h"
#include "support/error.h"

namespace layoutx::cli {

namespace {

struct WhatifArgs {
  PredictorOptions predictor;
  FidelityOptions fidelity;
  // The current choice: the shipped defaults unless told otherwise.
  std::string base_model = model::kDefaultModel;
  std::string base_precision = "w4a16";
  int base_ctx = 4096;
  // The question.
  std::string model, precision;
  int ctx = 0;
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

}  // namespace

void add_whatif_verb(CLI::App& app) {
  auto args = std::make_shared<WhatifArgs>();
  auto* sub = app.add_subcommand("whatif", "answer a question in flags side by side with the current choice");
  args->predictor.add_to(*sub);
  args->fidelity.add_to(*sub);
  sub->add_option("--base-model", args->base_model, "the current model")->capture_default_str();
  sub->add_option("--base-precision", args->base_precision, "the current precision")->capture_default_str()->check(precision_name());
  sub->add_option("--base-ctx", args->base_ctx, "the current context")
      ->capture_default_str()
      ->check(integer_in(2, model::limits::kMaxContext));
  sub->add_option("--model", args->model, "question: another model (a shipped name, .yaml or HF config.json)");
  sub->add_option("--precision", args->precision, "question: another precision")->check(precision_name());
  sub->add_option("--ctx", args->ctx, "question: another context")->check(integer_in(2, model::limits::kMaxContext));
  sub->add_option("--set", args->sets, "question: force an axis of a layer type, TYPE.axis=value (repeatable)");
  sub->add_option("--set-model", args->set_model, "question: change a model field, key=value (repeatable)");
  sub->add_flag("--json", args->json, "print one JSON document");
  sub->callback([args] {
    // 1. The current choice's scenario (the shipped defaults) and the question's.
    Scenario cur{model::load_model(args->base_model), model::parse_precision(args->base_precision),
                 args->base_ctx, {}, {}};
    Scenario q{args->model.empty() ? cur.model : model::load_model(args->model),
               args->precision.empty() ? cur.precision : model::parse_precision(args->precision),
               args->ctx ? args->ctx : cur.ctx, {}, {}};
    for (const auto& kv : args->set_model) {
      auto eq = kv.find('=');
      if (eq == std::string::npos) throw Error("--set-model: expected key=value, got '" + kv + "'");
      model::set_model_field(q.model, kv.substr(0, eq), kv.substr(eq + 1));
    }
    // A context the model cannot take is the flag's error, before any work.
    cur.model.check_context(cur.ctx, "--base-ctx");
    q.model.check_context(q.ctx, args->ctx ? "--ctx" : "--base-ctx");
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
    auto predictor = args->predictor.load();
    auto fidelity = args->fidelity.load();
    explorer::Evaluator ev(*predictor, fidelity.get());
    cur.answer = explorer::answer_context(ev, cur.model, cur.ctx, cur.precision, cur.policy);
    q.answer = explorer::answer_context(ev, q.model, q.ctx, q.precision, q.policy);
    // 3. Print side by side with the difference.
    const double d = q.answer.comparison.step.ms - cur.answer.comparison.step.ms;
    if (args->json) {
      JsonWriter w(std::cout);
      w.begin_object();
      args->predictor.write_json_identity(w, *predictor);
      w.key("current");
      scenario_json(w, cur);
      w.key("question");
      scenario_json(w, q);
      w.key("difference").begin_object();
      w.field("step_ms", d);
      w.field("step_ratio", q.answer.comparison.step.ms / cur.answer.comparison.step.ms);
      w.field("all_full_ms", q.answer.comparison.all_full.ms - cur.answer.comparison.all_full.ms);
      w.end_object();
      w.end_object();
      return;
    }
    auto describe = [](const Scenario& s) {
      return s.model.name + ", " + model::to_string(s.precision) + ", ctx " + std::to_string(s.ctx) +
             (s.model.sliding_window ? ", window " + std::to_string(*s.model.sliding_window) : "");
    };
    std::cout << "current:  " << describe(cur) << "\nquestion: " << describe(q);
    for (const auto& s : args->sets) std::cout << ", " << s;
    for (const auto& s : args->set_model) std::cout << ", " << s;
    std::cout << "\n(" << predictor->device() << ", calibration " << predictor->calibration_id() << ", " << args->predictor.source << ")\n";
    for (const Scenario* s : {&cur, &q})
      if (auto note = explorer::fidelity_skip_note(s->model, s->ctx, fidelity.get()); !note.empty())
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
  });
}

}  // namespace layoutx::cli
