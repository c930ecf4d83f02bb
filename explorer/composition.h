// A decode step is the sum of its layers: compose per-layer predictions over the model's
// layer pattern, compare with baselines, sweep contexts, find the crossover.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "explorer/evaluator.h"
#include "explorer/selection.h"

namespace layoutx::explorer {

// The layout of each layer type.
using Assignment = std::map<model::LayerType, model::Variant>;

// How a step's interval combines its layers' bounds, for the outputs that show it.
inline constexpr const char* kStepIntervalRule =
    "the sum of the layers' bounds (their errors taken as fully correlated: the widest the layers allow)";

struct StepResult {
  int ctx = 0;
  double ms = 0.0;                  // sum over every layer of its predicted latency
  double low_ms = 0.0, high_ms = 0.0;  // sums of the layer bounds (errors taken as fully correlated)
  std::map<model::LayerType, int> layers;          // how many layers of each type
  std::map<model::LayerType, double> per_layer_ms; // one layer's prediction per type
};

// Composes a step: every layer of `model` at `ctx` with its type's variant. Throws Error when a
// layer type of the model has no variant in `a`, or an evaluation failed.
StepResult compose(Evaluator& ev, const model::ModelSpec& model, int ctx, const Assignment& a);

// The same model with every layer full attention (the baseline a hybrid is compared with).
model::ModelSpec all_full(const model::ModelSpec& model);

// Each layer type at the incumbent layout (first export): the all-roll baseline.
Assignment incumbent_assignment(const model::ModelSpec& model, model::Precision precision);

struct Comparison {
  StepResult step;      // the assignment
  StepResult all_full;  // every layer full attention, with the assignment's full layout
  StepResult all_roll;  // every layer type at the incumbent layout
  double speedup_vs_all_full = 0.0;  // all_full.ms / step.ms
  // Whether the model has sliding layers: without them the step is all-full itself (1.00x), and
  // there is no hybrid to compare.
  bool hybrid() const { return step.layers.count(model::LayerType::kSliding) > 0; }
};
Comparison compare(Evaluator& ev, const model::ModelSpec& model, int ctx, const Assignment& a);

// Contexts from lo to hi: powers of two and their midpoints (512, 768, 1024, 1536, ...), plus
// lo and hi themselves.
std::vector<int> sweep_contexts(int lo, int hi);

struct SweepPoint {
  int ctx = 0;
  double hybrid_ms = 0.0, all_full_ms = 0.0;
};
struct Sweep {
  std::vector<SweepPoint> points;
  // Smallest context at which the hybrid step is faster than all-full (found by bisection on
  // integer contexts between sweep points); empty if it never is within [lo, hi].
  std::optional<int> crossover_ctx;
};
// `assign(ctx)` gives the assignment at a context (fixed layouts, or a selection per context).
Sweep sweep(Evaluator& ev, const model::ModelSpec& model, int lo, int hi,
            const std::function<Assignment(int ctx)>& assign);

}  // namespace layoutx::explorer
