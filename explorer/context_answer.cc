#include "explorer/context_answer.h"

namespace layoutx::explorer {

Policies same_policy(const SelectionPolicy& policy) {
  return {{model::LayerType::kSliding, policy}, {model::LayerType::kFull, policy}};
}

WhatifPolicies whatif_policies(const SelectionPolicy& base, const std::vector<ForcedAxis>& forced) {
  WhatifPolicies w{same_policy(base), same_policy(base)};
  for (auto& [t, policy] : w.current) policy.allow_untested = false;
  for (const ForcedAxis& f : forced) w.question[f.type].fixed_axes[f.axis] = f.value;
  return w;
}

ContextAnswer answer_context(Evaluator& ev, const model::ModelSpec& m, int ctx, model::Precision p,
                             const Policies& policies) {
  ContextAnswer a;
  a.ctx = ctx;
  Assignment chosen;
  for (auto t : {model::LayerType::kSliding, model::LayerType::kFull}) {
    if (m.count(t) == 0) continue;
    auto it = policies.find(t);
    a.choices.push_back(select_layer(ev, m.layer(t, ctx), p, it != policies.end() ? it->second : SelectionPolicy{}));
    chosen[t] = a.choices.back().chosen.eval.variant;
  }
  a.comparison = compare(ev, m, ctx, chosen);
  a.whole = whole_step(ev.predictor(), m, a.comparison.step, p);
  return a;
}

}  // namespace layoutx::explorer
