// The runtime around one layer graph, as the device runtime drives it: per step it builds the
// graph inputs (hidden state, cache tensors, mask, rotary tables for the absolute position),
// runs the graph, and keeps the cache: `returns: window` takes the returned window as the next
// cache (roll); `returns: new_entry` writes the new K/V into ring slot t mod (W-1) (sliding)
// or slot t (full, append). Cache slots not yet written are masked.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "model/numerics/executor.h"

namespace layoutx::model::numerics {

// One vector per step.
using Sequence = std::vector<std::vector<double>>;

// The per-step hidden states fed to the layer: N(0, 1) per element, deterministic in
// (seed, step), a residual stream of unit RMS (what the input RMSNorm sees at scale 1).
Sequence token_inputs(int hidden, int steps, uint64_t seed);

// Rotary tables of an absolute position, HF NeoX convention: angle_i = pos theta^(-2i/r) for
// i < r/2, and cos = [cos(angle), cos(angle)], sin likewise (length r).
void rope_tables(const RopeSpec& rope, int64_t position, std::vector<double>& cos, std::vector<double>& sin);

// Additive mask value of an unwritten slot. Float graphs: -1e4 (exp underflows to 0 in any
// float type, and it stays finite in f16). Quantized graphs: -100: the mask add's output is
// encoded in uint16 over its own range, so a larger magnitude would coarsen every score's
// step (range / 65535); exp(-100) is still 0 next to scores of order 1..30.
double default_mask_value(Precision p);

struct SimOptions {
  bool simulate_precision = false;   // see ExecOptions
  bool simulate_cache_codes = false; // see ExecOptions
  std::optional<double> mask_value;  // default: default_mask_value(variant precision)
  WeightQuantizer quantizer = kDefaultW4Quantizer;  // see ExecOptions
  const ActivationRanges* ranges = nullptr;          // see ExecOptions
  ActivationRanges* record = nullptr;                // see ExecOptions
  int record_from_step = 0;                          // with record: the steps before are not recorded
};

// Observer of one step: step index, the graph inputs and outputs by role.
template <typename T>
using StepObserver = std::function<void(int, const RoleTensors<T>&, const RoleTensors<T>&)>;

// Runs the layer graph over the token sequence `hidden_in` (one step per element, position =
// step index) and returns hidden_out per step. Throws Error if a full layer is asked for more
// steps than its context.
template <typename T>
Sequence simulate(const LayerGraph& graph, const LayerWeights& weights, const Sequence& hidden_in,
                  const SimOptions& options = {}, const StepObserver<T>& observe = {});
// The same over prepared weights made with options.simulate_precision (shared by many runs).
template <typename T>
Sequence simulate(const LayerGraph& graph, PreparedWeights<T>& weights, const Sequence& hidden_in,
                  const SimOptions& options = {}, const StepObserver<T>& observe = {});

// The calibration samples of a seeded history: `steps` decode steps of token inputs drawn from
// a stream of their own (not the measured history's tokens, as a calibration set is not the
// evaluation set), the first steps of a history as `emit --calibration-samples` saves them.
Sequence calibration_inputs(int hidden, int steps, uint64_t seed);

// Calibrates the graph's u16 activation ranges as a converter does: runs the graph without
// precision simulation (float weights and activations) over `history` (one step each, from an
// empty cache, through the runtime) and takes each u16 activation's min/max with 0 over its last
// `samples` steps (the calibration samples: decode steps whose cache holds the history before
// them). `weights` must be prepared without simulation. options.simulate_precision, .ranges,
// .record and .record_from_step are set here.
template <typename T>
ActivationRanges calibrate_activations(const LayerGraph& graph, PreparedWeights<T>& weights, const Sequence& history,
                                       int samples, SimOptions options = {});

}  // namespace layoutx::model::numerics
