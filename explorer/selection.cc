#include "explorer/selection.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "explorer/design_space.h"
#include "support/error.h"

namespace layoutx::explorer {

namespace {

// Two candidates tie when their latencies differ by less than the difference's interval (its
// half-width from the belief's mean and spread, so the size of a gain counts, not only its sign),
// or by less than the policy's minimum gain (a fraction of the faster one). Not a tie is not a
// certainty: under hypotheses that disagree, the reported P(faster) is the mixture's own
// (Predictor::probability_faster), e.g. 0.10 when a tenth of the weight says the other way.
bool ties(const costmodel::Predictor& pr, const SelectionPolicy& policy, const costmodel::Prediction& a,
          const costmodel::Prediction& b) {
  const double gap = std::abs(a.latency_ms - b.latency_ms);
  return gap <= pr.difference_half_width_ms(a, b) ||
         gap <= policy.min_gain_fraction * std::min(a.latency_ms, b.latency_ms);
}

bool known_to_convert(const Candidate& k) { return k.eval.prediction.legality.compiles == costmodel::Compiles::kYes; }

// What would settle an untested candidate's conversion: a compile-only job at its precision, and
// the records (or their absence) that leave it open.
std::string settle_text(const Candidate& k) {
  const auto& l = k.eval.prediction.legality;
  return std::string("a compile-only job of ") + k.eval.variant.key() + " (" +
         (l.compiles == costmodel::Compiles::kContested ? "its records disagree" : "never tried") + ")";
}

}  // namespace

Choice select_layer(Evaluator& ev, const model::LayerSpec& layer, model::Precision precision,
                    const SelectionPolicy& policy) {
  Choice c;
  c.layer = layer.type;
  const model::AxisScope scope(layer);
  c.incumbent = policy.incumbent ? *policy.incumbent : incumbent(layer.type, precision, scope);

  // 1. Ask for every point of the space: latency and legality (cheap, cached per shape). A fixed
  // axis the search enumerates keeps the variants holding its value; one it keeps at its default
  // (Axis::explored false: projection, heads) is set on every variant instead, so a question
  // fixing projection=conv1x1 is searched among 1x1-Conv variants rather than finding none.
  for (model::Variant v : meaningful_variants(precision, scope)) {
    bool fixed_ok = true;
    for (const auto& [axis, value] : policy.fixed_axes) {
      if (model::design_space().axis(axis).explored) fixed_ok = fixed_ok && model::axis_value(v, axis) == value;
      else model::design_space().set(v, axis, value);
    }
    if (!fixed_ok) continue;
    Candidate k;
    k.eval = ev.evaluate(layer, v);
    k.axis_changes = axis_changes(c.incumbent, v);
    const auto& p = k.eval.prediction;
    if (k.eval.status != EvalStatus::kOk) k.excluded_why = k.eval.error;
    else if (p.legality.compiles == costmodel::Compiles::kNo)
      k.excluded_why = "does not convert: " + (p.legality.reasons.empty() ? std::string("rule") : p.legality.reasons[0]);
    else k.eligible = true;
    c.candidates.push_back(std::move(k));
  }
  std::stable_sort(c.candidates.begin(), c.candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.eligible != b.eligible) return a.eligible;
    return a.eval.prediction.latency_ms < b.eval.prediction.latency_ms;
  });

  // 2. The fidelity floor, asked lazily (fidelity is costly): only of candidates that could be
  // chosen, i.e. the fastest, those tied with it, and the runner-up.
  std::optional<double> floor_db = policy.min_snr_db;
  if (!floor_db)
    if (auto inc = ev.fidelity(layer, c.incumbent)) {
      floor_db = *inc - policy.fidelity_slack_db;
      c.incumbent_snr_db = inc;
    }
  c.floor_db = floor_db;
  auto passes = [&](Candidate& k) {
    if (!k.eligible) return false;
    if (!floor_db) return true;
    k.eval.snr_db = ev.fidelity(layer, k.eval.variant);
    if (k.eval.snr_db && *k.eval.snr_db < *floor_db) {
      k.eligible = false;
      k.excluded_why = "fidelity " + std::to_string(*k.eval.snr_db) + " dB is below the floor " +
                       std::to_string(*floor_db) + " dB";
      return false;
    }
    return true;
  };

  // 3. Prefer what is known to convert: the pool is the known-good candidates when one of them
  // passes; otherwise the untried too.
  Candidate* fastest = nullptr;
  std::vector<Candidate*> pool;
  bool known = true;
  for (bool only_known : {true, false}) {
    pool.clear();
    for (auto& k : c.candidates)
      if (k.eligible && (!only_known || policy.allow_untested || known_to_convert(k)))
        pool.push_back(&k);
    for (auto* k : pool)
      if (passes(*k)) {
        fastest = k;
        break;
      }
    if (fastest) break;
    known = false;
  }
  if (!fastest) {
    std::string fixed;
    for (const auto& [axis, value] : policy.fixed_axes) fixed += " " + axis + "=" + value;
    throw Error(std::string("select: no eligible variant for the ") + model::to_string(layer.type) +
                " layer at " + model::to_string(precision) + (fixed.empty() ? "" : " with" + fixed) +
                (c.candidates.empty() ? "" : " (e.g. " + c.candidates.front().eval.variant.key() + ": " +
                                                 c.candidates.front().excluded_why + ")"));
  }

  // 4. The tie set: candidates whose latency differs from the fastest one's by less than the
  // difference's interval or the minimum gain. Among them, the fewest axis changes from the incumbent wins; then
  // the faster.
  std::vector<Candidate*> tied;
  for (auto* k : pool)
    if (k->eligible && ties(ev.predictor(), policy, k->eval.prediction, fastest->eval.prediction) && passes(*k))
      tied.push_back(k);
  const Candidate* chosen = *std::min_element(tied.begin(), tied.end(), [](const Candidate* a, const Candidate* b) {
    if (a->axis_changes != b->axis_changes) return a->axis_changes < b->axis_changes;
    return a->eval.prediction.latency_ms < b->eval.prediction.latency_ms;
  });
  c.chosen = *chosen;
  const double twin_ms = policy.min_gain_fraction * chosen->eval.prediction.latency_ms;
  for (auto* k : pool)
    if (k != chosen && std::abs(k->eval.prediction.latency_ms - chosen->eval.prediction.latency_ms) > twin_ms &&
        passes(*k)) {
      c.runner_up = *k;
      break;
    }
  if (c.runner_up) {
    c.margin_ms = c.runner_up->eval.prediction.latency_ms - c.chosen.eval.prediction.latency_ms;
    c.tie = ties(ev.predictor(), policy, c.runner_up->eval.prediction, c.chosen.eval.prediction);
    c.runner_up->p_faster_than_chosen = ev.predictor().probability_faster(c.runner_up->eval.prediction, c.chosen.eval.prediction);
  }
  for (const auto* k : tied) {
    Candidate t = *k;
    t.p_faster_than_chosen = k == chosen ? 0.5 : ev.predictor().probability_faster(k->eval.prediction, c.chosen.eval.prediction);
    c.tied.push_back(std::move(t));
  }
  for (auto& k : c.candidates)
    if (k.eval.status == EvalStatus::kOk) k.p_faster_than_chosen = ev.predictor().probability_faster(k.eval.prediction, c.chosen.eval.prediction);

  // 5. Say why.
  char gain[48];
  std::snprintf(gain, sizeof gain, "the %.3g%% minimum gain", 100.0 * policy.min_gain_fraction);
  const std::string within = "within the uncertainty of the difference" +
                             (policy.min_gain_fraction > 0 ? " or " + std::string(gain) : std::string());
  if (chosen == fastest && tied.size() == 1) c.why = "fastest, and faster than every other beyond the uncertainty of the difference" +
                                                     (policy.min_gain_fraction > 0 ? " and " + std::string(gain) : std::string());
  else if (chosen == fastest) c.why = "fastest; " + std::to_string(tied.size() - 1) + " others tie " + within + ", and none changes fewer axes";
  else c.why = "ties with the fastest " + within + " and changes fewer axes from the incumbent (" +
               std::to_string(chosen->axis_changes) + " vs " + std::to_string(fastest->axis_changes) + ")";
  c.chose_untested = !known_to_convert(c.chosen);
  if (!known) c.why += "; no candidate is known to convert: chosen among the untested";
  else if (c.chose_untested) c.why += "; its conversion is untested (" + std::string(costmodel::to_string(c.chosen.eval.prediction.legality.compiles)) + "), allowed by --allow-untested";

  // 6. What was kept out for want of a conversion record, and would be faster by more than the
  // minimum gain: the three fastest, one of each set of twins.
  // Each goes through the fidelity floor like any candidate that could win.
  if (!policy.allow_untested && known)
    for (auto& k : c.candidates)
      if (c.untested.size() < 3 && k.eligible && !known_to_convert(k) &&
          k.eval.prediction.latency_ms < c.chosen.eval.prediction.latency_ms - twin_ms &&
          std::none_of(c.untested.begin(), c.untested.end(), [&](const Untested& u) {  // one of each set of twins
            return std::abs(u.candidate.eval.prediction.latency_ms - k.eval.prediction.latency_ms) <= twin_ms;
          }) &&
          passes(k)) {
        Untested u;
        u.candidate = k;
        u.saving_ms = c.chosen.eval.prediction.latency_ms - k.eval.prediction.latency_ms;
        u.settle = settle_text(k);
        c.untested.push_back(std::move(u));
      }
  return c;
}

}  // namespace layoutx::explorer
