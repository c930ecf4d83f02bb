// layoutx propose: the whole-model layout a team could ship (issue 35), searched over the layer
// layouts (select's choice per layer type, under the fidelity floor and the converter's
// legality) and the model-level axes (layers per context binary, where the embedding gather and
// the LM head run), under the device's limits; beside the team's shipped default and, when
// untested forms may win, beside the best layout made only of forms known to compile.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "explorer/measurement_plan.h"
#include "explorer/model_layout.h"
#include "explorer/selection.h"

namespace layoutx::explorer {

struct ProposalOptions {
  SelectionPolicy policy;               // each layer type's selection (fidelity floor, legality)
  // Fixed by the question (an exporter's layout to price, or a team's constraint); the rest is
  // searched. A fixed layer layout may hold forms not priced yet (priced as their defaults, said).
  Assignment fixed_layers;
  std::optional<int> layers_per_part;   // fixed; else every count from 1 to all is tried
  std::optional<bool> embed_in_first, head_in_last;  // fixed; else both placements are tried
  model::Precision head_precision = model::Precision::kW4A16;  // the LM head's, in every layout
  KvUpdate kv_update = KvUpdate::kInPlace;
  StepScope scope = StepScope::kRunner;
};

// What one axis changes, taken from the baseline to the proposal one axis at a time in the
// order listed (each delta is measured with the axes before it already changed; they sum to
// proposal - baseline).
struct AxisGain {
  std::string axis;      // "sliding layout", "full layout", "kv update", "parts"
  std::string from, to;
  double delta_ms = 0;   // change in ms per token (negative: faster)
};

struct Proposal {
  int ctx = 0;
  ModelLayout layout, baseline_layout, known_good_layout;
  ModelStep step, baseline, known_good;
  bool known_good_differs = false;  // untested forms won (policy.allow_untested)
  std::vector<AxisGain> gains;
  std::vector<Choice> choices;      // the layer selections behind `layout`
  // A layer layout the question fixed is not searched, so neither the fidelity floor nor the
  // converter's legality chose it: one line each says its legality ("sliding layout fixed by the
  // question: score-join (compiles: contested)").
  std::vector<std::string> fixed;
  int partitions_priced = 0;        // partitions the search priced
  int partitions_refused = 0;       // ... of which broke a device limit
  std::string refused_example;      // the first refusal's message
  // The partition the search picks with every runtime prior at its low end, and at its high end
  // (the host call and the wake-up decide it): the same as the proposal's when the choice does
  // not rest on where in their ranges those priors are.
  std::string partition, partition_at_low, partition_at_high;
  // The LM head at each other precision, the rest of the proposal unchanged: ms per token more
  // (or less) than the proposal. The head's precision is the question's (its fidelity is not
  // checked), so these are what the choice costs, not candidates.
  std::vector<std::pair<model::Precision, double>> head_alternatives;
};

// The proposal's layer choices as the decisions `next` values measurements for (one per layer
// type, at the proposal's context, weighted by the layers of that type).
std::vector<Decision> proposal_decisions(const Proposal& p, const model::ModelSpec& m);

// The team's shipped default at `p`: ring sliding layers, key-join full ones (both return the new
// entry), the default exporter forms (f16 cache), one layer per graph, the embedding and the head
// in graphs of their own, the KV written in place.
ModelLayout team_default(const model::ModelSpec& m, model::Precision p, const ProposalOptions& o);

// A layout's layer graphs as the device timed them: each layer type's graph at `ctx` matched by
// graph key to the layer timings in `records` (their mean when timed more than once), times the
// model's layers of that type, beside the prediction of the same graphs. The graphs only: no
// per-call, host or LM head term (the device's sums, as the team composed its step). nullopt when
// some type's graph was never timed.
struct MeasuredLayers {
  double measured_ms = 0, predicted_ms = 0;
  std::vector<std::string> terms;  // "21 x 0.838 ms sliding", one per layer type
};
std::optional<MeasuredLayers> measured_layers(Evaluator& ev, const model::ModelSpec& m, int ctx, const Assignment& layers,
                                              const std::vector<costmodel::MeasurementRecord>& records);

// Throws Error when no partition stays within the device's limits (the message of the last
// refusal), or when `o.layers_per_part` breaks one.
Proposal propose(Evaluator& ev, const model::ModelSpec& m, int ctx, model::Precision p, const ProposalOptions& o,
                 const costmodel::RuntimeSpec& runtime);

}  // namespace layoutx::explorer
