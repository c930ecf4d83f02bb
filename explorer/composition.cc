#include "explorer/composition.h"

#include <algorithm>
#include <set>

#include "explorer/design_space.h"
#include "support/error.h"

namespace layoutx::explorer {

StepResult compose(Evaluator& ev, const model::ModelSpec& model, int ctx, const Assignment& a) {
  StepResult r;
  r.ctx = ctx;
  for (model::LayerType t : model.layer_types) {
    auto it = a.find(t);
    if (it == a.end())
      throw Error(std::string("step: no layout given for the ") + model::to_string(t) + " layers of " + model.name);
    const Evaluation& e = ev.evaluate(model.layer(t, ctx), it->second);
    if (e.status != EvalStatus::kOk) throw Error(std::string("step: ") + model::to_string(t) + " " + it->second.key() + ": " + e.error);
    r.ms += e.prediction.latency_ms;
    r.low_ms += e.prediction.low_ms;
    r.high_ms += e.prediction.high_ms;
    r.layers[t] += 1;
    r.per_layer_ms[t] = e.prediction.latency_ms;
  }
  return r;
}

model::ModelSpec all_full(const model::ModelSpec& model) {
  model::ModelSpec m = model;
  m.name = model.name + " (all full attention)";
  std::fill(m.layer_types.begin(), m.layer_types.end(), model::LayerType::kFull);
  return m;
}

Assignment incumbent_assignment(const model::ModelSpec& model, model::Precision precision) {
  Assignment a;
  for (model::LayerType t : model.layer_types) a.emplace(t, incumbent(t, precision, model::AxisScope(model)));
  return a;
}

Comparison compare(Evaluator& ev, const model::ModelSpec& model, int ctx, const Assignment& a) {
  Comparison c;
  c.step = compose(ev, model, ctx, a);
  model::Precision p = a.begin()->second.precision();
  auto full_it = a.find(model::LayerType::kFull);
  model::Variant full_v = full_it != a.end() ? full_it->second : incumbent(model::LayerType::kFull, p, model::AxisScope(model));
  c.all_full = compose(ev, all_full(model), ctx, {{model::LayerType::kFull, full_v}});
  c.all_roll = compose(ev, model, ctx, incumbent_assignment(model, p));
  c.speedup_vs_all_full = c.all_full.ms / c.step.ms;
  return c;
}

std::vector<int> sweep_contexts(int lo, int hi) {
  std::set<int> s{lo, hi};
  for (long p = 1; p <= hi; p *= 2) {
    for (long c : {p, p + p / 2})
      if (c >= lo && c <= hi) s.insert(static_cast<int>(c));
  }
  return {s.begin(), s.end()};
}

Sweep sweep(Evaluator& ev, const model::ModelSpec& model, int lo, int hi,
            const std::function<Assignment(int ctx)>& assign) {
  if (lo > hi) throw Error("--sweep-ctx: LO must not exceed HI, got " + std::to_string(lo) + ":" + std::to_string(hi));
  Sweep s;
  auto diff = [&](int ctx, SweepPoint* out) {
    Comparison c = compare(ev, model, ctx, assign(ctx));
    if (out) *out = {ctx, c.step.ms, c.all_full.ms};
    return c.step.ms - c.all_full.ms;  // < 0: the hybrid wins
  };
  std::optional<int> prev;
  for (int ctx : sweep_contexts(lo, hi)) {
    SweepPoint pt;
    double d = diff(ctx, &pt);
    s.points.push_back(pt);
    if (!s.crossover_ctx && d < 0) {
      if (!prev) {
        s.crossover_ctx = ctx;  // already winning at the first point
      } else {
        int a = *prev, b = ctx;  // diff(a) >= 0, diff(b) < 0
        while (b - a > 1) {
          int m = a + (b - a) / 2;
          (diff(m, nullptr) < 0 ? b : a) = m;
        }
        s.crossover_ctx = b;
      }
    }
    prev = ctx;
  }
  return s;
}

}  // namespace layoutx::explorer
