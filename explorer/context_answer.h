// Per-context selection: a choice per layer type the model has, each under its type's policy,
// then the composed step beside its baselines and the whole step. What select, whatif, next,
// report and the explorer benchmark ask for one (model, context, precision).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "explorer/composition.h"
#include "explorer/evaluator.h"
#include "explorer/selection.h"
#include "explorer/whole_step.h"
#include "model/model_spec.h"

namespace layoutx::explorer {

// One context's answer: the per-type choices and the composed step with its baselines.
struct ContextAnswer {
  int ctx = 0;
  std::vector<Choice> choices;  // sliding first, then full; only the types the model has
  Comparison comparison;
  WholeStep whole;  // the chosen step with embedding, final norm and LM head (at the layers' precision)
};

// The selection policy of each layer type; a type not listed gets SelectionPolicy{}.
using Policies = std::map<model::LayerType, SelectionPolicy>;
// The same policy for every layer type.
Policies same_policy(const SelectionPolicy& policy);

// whatif's two policies. The current choice: `base` for every type but known-good only
// (--allow-untested is part of the question). The question: `base` with each forced axis fixed
// for its layer type.
struct ForcedAxis {
  model::LayerType type;
  std::string axis, value;
};
struct WhatifPolicies {
  Policies current, question;
};
WhatifPolicies whatif_policies(const SelectionPolicy& base, const std::vector<ForcedAxis>& forced);

// Chooses per layer type at `ctx` and precision `p`, composes the step (explorer::compare) and
// the whole step. Deterministic for a given evaluator state; fidelity is asked lazily.
ContextAnswer answer_context(Evaluator& ev, const model::ModelSpec& m, int ctx, model::Precision p,
                             const Policies& policies);

}  // namespace layoutx::explorer
