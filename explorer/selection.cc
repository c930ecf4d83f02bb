#include "explorer/selection.h"

#include <algorithm>
#include <cmath>

#include "explorer/design_space.h"
#include "support/error.h"

namespace layoutx::explorer {

namespace {

// z of a two-sided normal interval of coverage `level`.
double z_of(double level) {
  // Inverse of erf by bisection: enough for reporting a probability.
  double lo = 0.0, hi = 10.0, target = level;
  for (int i = 0; i < 80; ++i) {
    double mid = 0.5 * (lo + hi);
    (std::erf(mid / std::sqrt(2.0)) < target ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

double sigma_of(const costmodel::Prediction& p) {
  double z = z_of(std::clamp(p.interval_level, 0.5, 0.999));
  return std::max(1e-12, (p.high_ms - p.low_ms) / (2.0 * z));
}

bool overlaps(const costmodel::Prediction& a, const costmodel::Prediction& b) {
  return a.low_ms <= b.high_ms && b.low_ms <= a.high_ms;
}

}  // namespace

double probability_faster(const costmodel::Prediction& a, const costmodel::Prediction& b) {
  double s = std::hypot(sigma_of(a), sigma_of(b));
  return 0.5 * std::erfc((a.latency_ms - b.latency_ms) / (s * std::sqrt(2.0)));
}

Choice select_layer(Evaluator& ev, const model::LayerSpec& layer, model::Precision precision,
                    const SelectionPolicy& policy) {
  Choice c;
  c.layer = layer.type;
  c.incumbent = incumbent(layer.type, precision);

  // 1. Ask for every point of the space.
  const Evaluation& inc = ev.evaluate(layer, c.incumbent);
  std::optional<double> floor_db = policy.min_snr_db;
  if (!floor_db && inc.snr_db) floor_db = *inc.snr_db - policy.fidelity_slack_db;
  for (const auto& v : meaningful_variants(precision)) {
    bool fixed_ok = true;
    for (const auto& [axis, value] : policy.fixed_axes) fixed_ok = fixed_ok && model::axis_value(v, axis) == value;
    if (!fixed_ok) continue;
    Candidate k;
    k.eval = ev.evaluate(layer, v);
    k.axis_changes = axis_changes(c.incumbent, v);
    const auto& p = k.eval.prediction;
    if (k.eval.status != EvalStatus::kOk) k.excluded_why = k.eval.error;
    else if (p.legality.compiles == costmodel::Compiles::kNo)
      k.excluded_why = "does not convert: " + (p.legality.reasons.empty() ? std::string("rule") : p.legality.reasons[0]);
    else if (floor_db && k.eval.snr_db && *k.eval.snr_db < *floor_db)
      k.excluded_why = "fidelity " + std::to_string(*k.eval.snr_db) + " dB below the floor " + std::to_string(*floor_db) + " dB";
    else k.eligible = true;
    c.candidates.push_back(std::move(k));
  }
  std::stable_sort(c.candidates.begin(), c.candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.eligible != b.eligible) return a.eligible;
    return a.eval.prediction.latency_ms < b.eval.prediction.latency_ms;
  });

  // 2. Prefer what is known to convert: the pool is the known-good candidates when any exist.
  std::vector<const Candidate*> pool;
  for (const auto& k : c.candidates)
    if (k.eligible && k.eval.prediction.legality.compiles == costmodel::Compiles::kYes) pool.push_back(&k);
  bool known = !pool.empty();
  if (!known)
    for (const auto& k : c.candidates)
      if (k.eligible) pool.push_back(&k);
  if (pool.empty()) {
    std::string fixed;
    for (const auto& [axis, value] : policy.fixed_axes) fixed += " " + axis + "=" + value;
    throw Error(std::string("select: no eligible variant for the ") + model::to_string(layer.type) +
                " layer at " + model::to_string(precision) + (fixed.empty() ? "" : " with" + fixed) +
                (c.candidates.empty() ? "" : " (e.g. " + c.candidates.front().eval.variant.key() + ": " +
                                                 c.candidates.front().excluded_why + ")"));
  }

  // 3. The tie set: candidates whose interval overlaps the fastest one's. Among them, the fewest
  // axis changes from the incumbent wins; then the faster.
  const Candidate* fastest = pool.front();
  std::vector<const Candidate*> tied;
  for (const auto* k : pool)
    if (overlaps(k->eval.prediction, fastest->eval.prediction)) tied.push_back(k);
  const Candidate* chosen = *std::min_element(tied.begin(), tied.end(), [](const Candidate* a, const Candidate* b) {
    if (a->axis_changes != b->axis_changes) return a->axis_changes < b->axis_changes;
    return a->eval.prediction.latency_ms < b->eval.prediction.latency_ms;
  });
  c.chosen = *chosen;
  for (const auto* k : pool)
    if (k != chosen) {
      c.runner_up = *k;
      break;
    }
  if (c.runner_up) {
    c.margin_ms = c.runner_up->eval.prediction.latency_ms - c.chosen.eval.prediction.latency_ms;
    c.tie = overlaps(c.runner_up->eval.prediction, c.chosen.eval.prediction);
    c.runner_up->p_faster_than_chosen = probability_faster(c.runner_up->eval.prediction, c.chosen.eval.prediction);
  }
  for (const auto* k : tied) {
    Candidate t = *k;
    t.p_faster_than_chosen = k == chosen ? 0.5 : probability_faster(k->eval.prediction, c.chosen.eval.prediction);
    c.tied.push_back(std::move(t));
  }
  for (auto& k : c.candidates)
    if (k.eval.status == EvalStatus::kOk) k.p_faster_than_chosen = probability_faster(k.eval.prediction, c.chosen.eval.prediction);

  // 4. Say why.
  if (chosen == fastest && tied.size() == 1) c.why = "fastest, and no other candidate's interval overlaps it";
  else if (chosen == fastest) c.why = "fastest; " + std::to_string(tied.size() - 1) + " others tie within the intervals, and none changes fewer axes";
  else c.why = "tied with the fastest within the intervals and changes fewer axes from the incumbent (" +
               std::to_string(chosen->axis_changes) + " vs " + std::to_string(fastest->axis_changes) + ")";
  if (!known) c.why += "; no candidate is known to convert: chosen among the untried";
  return c;
}

}  // namespace layoutx::explorer
