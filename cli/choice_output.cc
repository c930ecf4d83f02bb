#include "cli/choice_output.h"

#include "cli/table.h"
#include "explorer/design_space.h"
#include "model/design_space.h"

namespace layoutx::cli {

void print_whole_step_line(std::ostream& out, const explorer::WholeStep& s) {
  out << "whole step " << fmt(s.ms) << " ms/token [" << fmt(s.low_ms) << ", " << fmt(s.high_ms) << "] = "
      << fmt(1e3 / s.ms, 1) << " tokens/s   layers only " << fmt(s.layers_ms) << " ms   LM head ("
      << model::to_string(s.head_precision) << ") " << fmt(s.lm_head_ms) << " ms, " << fmt(100 * s.lm_head_share, 1)
      << "% of the step   embedding " << fmt(s.embed_ms) << " ms, final norm + head graph " << fmt(s.head_ms) << " ms\n";
}

void write_whole_step_json(JsonWriter& w, const explorer::WholeStep& s) {
  w.key("whole_step").begin_object();
  w.field("ms_per_token", s.ms);
  w.key("interval_ms").value(std::vector<double>{s.low_ms, s.high_ms});
  w.field("tokens_per_s", s.tokens_per_s);
  w.field("layers_ms", s.layers_ms);
  w.field("embed_ms", s.embed_ms);
  w.field("head_ms", s.head_ms);
  w.field("lm_head_ms", s.lm_head_ms);
  w.field("lm_head_share", s.lm_head_share);
  w.field("head_precision", model::to_string(s.head_precision));
  w.end_object();
}

model::Precision head_precision_or(const std::string& flag, model::Precision layers) {
  return flag.empty() ? layers : model::parse_precision(flag);
}

std::string short_name(const model::Variant& v, const model::AxisScope* scope) {
  return model::design_space().display_name(v, scope);
}

namespace {
std::string interval(const costmodel::Prediction& p) { return "[" + fmt(p.low_ms) + ", " + fmt(p.high_ms) + "]"; }
std::string snr(const explorer::Candidate& k) { return k.eval.snr_db ? fmt(*k.eval.snr_db, 1) + " dB" : "-"; }
}  // namespace

void print_choices_table(std::ostream& out, const explorer::ContextAnswer& a, const model::AxisScope* scope) {
  auto short_name = [scope](const model::Variant& v) { return cli::short_name(v, scope); };
  Table t({"layer", "n", "chosen", "ms", "interval", "compiles", "fidelity", "runner-up", "margin ms", "tie",
           "P(runner-up faster)"});
  for (const auto& c : a.choices) {
    const auto& p = c.chosen.eval.prediction;
    int n = a.comparison.step.layers.count(c.layer) ? a.comparison.step.layers.at(c.layer) : 0;
    t.add({model::to_string(c.layer), std::to_string(n), short_name(c.chosen.eval.variant), fmt(p.latency_ms),
           interval(p), costmodel::to_string(p.legality.compiles), snr(c.chosen),
           c.runner_up ? short_name(c.runner_up->eval.variant) : "-", c.runner_up ? fmt(c.margin_ms) : "-",
           c.tie ? "yes" : "no", c.runner_up ? fmt(c.runner_up->p_faster_than_chosen, 2) : "-"});
  }
  t.print(out);
  for (const auto& c : a.choices) out << "  " << model::to_string(c.layer) << ": " << c.why << "\n";
  // The floor beside the incumbent's own SNR, so "at most 1 dB below the incumbent" can be checked.
  for (const auto& c : a.choices) {
    if (!c.floor_db) continue;
    out << "  " << model::to_string(c.layer) << " fidelity floor " << fmt(*c.floor_db, 1) << " dB";
    if (c.incumbent_snr_db)
      out << " = the incumbent " << short_name(c.incumbent) << "'s " << fmt(*c.incumbent_snr_db, 1) << " dB less "
          << fmt(*c.incumbent_snr_db - *c.floor_db, 1) << " dB";
    else out << " (absolute; the incumbent " << short_name(c.incumbent) << " not measured)";
    out << "; chosen " << snr(c.chosen) << "\n";
  }
  for (const auto& c : a.choices) {
    int n = a.comparison.step.layers.count(c.layer) ? a.comparison.step.layers.at(c.layer) : 0;
    for (const auto& u : c.untested) {
      const auto& l = u.candidate.eval.prediction.legality;
      out << "  untested (" << model::to_string(c.layer) << "): " << short_name(u.candidate.eval.variant)
          << " would save " << fmt(u.saving_ms * n) << " ms per step (" << fmt(u.saving_ms) << " ms x " << n
          << " layers, P faster = " << fmt(u.candidate.p_faster_than_chosen, 2) << ") if it compiles; compiles: "
          << costmodel::to_string(l.compiles) << "\n";
      for (const auto& r : l.reasons) out << "      " << r << "\n";
      out << "      settle with " << u.settle << "\n";
    }
  }
}

void print_comparison_line(std::ostream& out, const explorer::Comparison& c) {
  out << "step " << fmt(c.step.ms) << " ms [" << fmt(c.step.low_ms) << ", " << fmt(c.step.high_ms) << "]";
  if (c.hybrid()) out << "   all-full " << fmt(c.all_full.ms) << " ms (hybrid is " << fmt(c.speedup_vs_all_full, 2) << "x faster)";
  else out << "   (no sliding layers: the step is all-full attention)";
  out << "   all-roll " << fmt(c.all_roll.ms) << " ms (" << fmt(c.all_roll.ms / c.step.ms, 2) << "x)\n";
}

void write_variant_axes_json(JsonWriter& w, const model::Variant& v, std::optional<model::AxisScope> scope) {
  w.key("axes").begin_object();
  for (const auto& [axis, value] : model::design_space().spelled(v, scope ? &*scope : nullptr)) w.field(axis, value);
  w.end_object();
}

void write_choice_json(JsonWriter& w, const explorer::Choice& c, std::optional<model::AxisScope> scope) {
  auto short_name = [&scope](const model::Variant& v) { return cli::short_name(v, scope ? &*scope : nullptr); };
  const auto& p = c.chosen.eval.prediction;
  w.begin_object();
  w.field("layer", model::to_string(c.layer));
  if (!c.chosen.eval.variant.preset().empty()) w.field("preset", c.chosen.eval.variant.preset());
  else w.key("preset").null();
  w.field("name", short_name(c.chosen.eval.variant));
  write_variant_axes_json(w, c.chosen.eval.variant, scope);
  w.field("variant_key", c.chosen.eval.variant.key());
  w.field("latency_ms", p.latency_ms);
  w.key("interval_ms").value(std::vector<double>{p.low_ms, p.high_ms});
  w.field("compiles", costmodel::to_string(p.legality.compiles));
  if (c.chosen.eval.snr_db) w.field("snr_db", *c.chosen.eval.snr_db);
  else w.key("snr_db").null();
  w.field("axis_changes_from_incumbent", c.chosen.axis_changes);
  w.field("incumbent", c.incumbent.key());
  if (c.incumbent_snr_db) w.field("incumbent_snr_db", *c.incumbent_snr_db);
  else w.key("incumbent_snr_db").null();
  if (c.floor_db) w.field("fidelity_floor_db", *c.floor_db);
  else w.key("fidelity_floor_db").null();
  if (c.runner_up) {
    w.key("runner_up").begin_object();
    w.field("name", short_name(c.runner_up->eval.variant));
    w.field("variant_key", c.runner_up->eval.variant.key());
    w.field("latency_ms", c.runner_up->eval.prediction.latency_ms);
    w.key("interval_ms").value(std::vector<double>{c.runner_up->eval.prediction.low_ms, c.runner_up->eval.prediction.high_ms});
    w.field("p_faster_than_chosen", c.runner_up->p_faster_than_chosen);
    w.end_object();
  } else {
    w.key("runner_up").null();
  }
  w.field("margin_ms", c.margin_ms);
  w.field("tie", c.tie);
  w.key("tied").begin_array();
  for (const auto& t : c.tied) {
    w.begin_object();
    w.field("variant_key", t.eval.variant.key());
    w.field("latency_ms", t.eval.prediction.latency_ms);
    w.field("p_faster_than_chosen", t.p_faster_than_chosen);
    w.end_object();
  }
  w.end_array();
  w.field("chose_untested", c.chose_untested);
  w.key("untested").begin_array();
  for (const auto& u : c.untested) {
    const auto& k = u.candidate;
    w.begin_object();
    w.field("name", short_name(k.eval.variant));
    w.field("variant_key", k.eval.variant.key());
    w.field("compiles", costmodel::to_string(k.eval.prediction.legality.compiles));
    w.field("reasons", k.eval.prediction.legality.reasons);
    w.field("latency_ms", k.eval.prediction.latency_ms);
    w.field("saving_ms_per_layer", u.saving_ms);
    w.field("p_faster_than_chosen", k.p_faster_than_chosen);
    w.field("settle", u.settle);
    w.end_object();
  }
  w.end_array();
  w.field("why", c.why);
  w.end_object();
}

void write_comparison_json(JsonWriter& w, const explorer::Comparison& c) {
  w.field("step_ms", c.step.ms);
  w.key("step_interval_ms").value(std::vector<double>{c.step.low_ms, c.step.high_ms});
  w.field("step_interval_rule", explorer::kStepIntervalRule);
  w.field("has_sliding_layers", c.hybrid());
  w.field("all_full_ms", c.all_full.ms);
  w.field("all_roll_ms", c.all_roll.ms);
  w.field("speedup_vs_all_full", c.speedup_vs_all_full);
  w.field("speedup_vs_all_roll", c.all_roll.ms / c.step.ms);
  w.key("layers").begin_object();
  for (const auto& [t, n] : c.step.layers) {
    w.key(model::to_string(t)).begin_object();
    w.field("count", n);
    w.field("ms_per_layer", c.step.per_layer_ms.at(t));
    w.end_object();
  }
  w.end_object();
}

}  // namespace layoutx::cli
