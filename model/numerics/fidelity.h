// Fidelity of a variant's output against a reference over a multi-step history: SNR (dB),
// max abs error, top-k agreement; and the entry points other stages call (the explorer's
// fidelity figure, the ONNX emitter's per-step test vectors).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/numerics/runtime.h"
#include "model/variant.h"

namespace layoutx::model::numerics {

struct Fidelity {
  int steps = 0;
  double snr_db = 0;         // 10 log10(sum ref^2 / sum (x - ref)^2) over every step's hidden output; +inf if equal
  double max_abs_err = 0;    // max |x - ref| over every element of every step
  double delta_snr_db = 0;   // the same SNR on the layer's update (hidden_out - hidden_in), which the
                             // residual pass-through does not inflate; +inf if equal
  double min_step_snr_db = 0;  // worst single step
  std::vector<double> step_snr_db;  // per step, in order
  int k = 5;
  double topk_agreement = 0;  // fraction of steps whose top-k output indices (as a set) agree
  double top1_agreement = 0;  // fraction of steps whose argmax agrees
};

// x against ref (same step count and sizes); hidden_in gives the update SNR.
Fidelity compare(const Sequence& ref, const Sequence& x, const Sequence& hidden_in, int k = 5);

// How the device toolchain quantizes a quantized variant (QNN / AI Hub): a choice of the
// question, not a layout axis.
struct QuantOptions {
  WeightQuantizer w4 = kDefaultW4Quantizer;  // 4-bit weights; 8-bit ones are per channel
  // 16-bit activations: per-tensor asymmetric uint16 ranges calibrated on sample inputs, then
  // fixed for the measured run (values outside clip): the min/max, with 0, of a float pass over
  // the last `calibration_steps` decode steps of a calibration history (calibration_inputs(seed):
  // other tokens than the measured ones) as long as the measured history, so the samples see
  // the cache as full as the measured steps do (a converter calibrated on the first steps of a
  // history only, from an empty cache, clips the scores of a full window). 0: every tensor is
  // encoded over its own range at each step (no calibration; optimistic: nothing ever clips).
  int calibration_steps = 8;
  uint64_t calibration_seed = 1;
};

enum class Arithmetic { kFloat32, kFloat64 };
const char* to_string(Arithmetic a);
Arithmetic parse_arithmetic(const std::string& s);  // "float32" / "float64"; throws Error otherwise

// Builds the variant's graph and simulates it over hidden_in; hidden_out per step. Simulating
// a quantized precision, the activation ranges are calibrated first (QuantOptions).
Sequence run_variant(const LayerSpec& layer, const Variant& variant, const LayerWeights& weights,
                     const Sequence& hidden_in, Arithmetic arithmetic, bool simulate_precision,
                     const QuantOptions& quant = {});

// The explorer's figure: SNR (dB) of the variant (float32, its precision simulated) against
// the float64 reference over `steps` tokens, seeded weights and inputs. Cost: steps x the
// layer's MACs for the variant; the seeded weights (with their quantizations) of the last few
// weight shapes, and the inputs and reference outputs of the last few (layer, steps, seed),
// are kept in memory, so asking for many variants of a few layers pays them once.
// Thread-safe.
// The decode steps the explorer's fidelity check runs on `layer` (unless told otherwise): a
// sliding layer's window + 8 (its cache of window - 1 entries is full from step window - 1, a
// ring wraps at the step after, so the last steps see a full window and a wrapped ring); a full
// layer the same 520 steps as a 512-token window's, or its whole context if shorter (it never
// wraps).
int fidelity_history(const LayerSpec& layer);

// The calibration uses `seed` (quant.calibration_seed is ignored).
double fidelity_snr_db(const LayerSpec& layer, const Variant& variant, int steps, uint64_t seed,
                       const QuantOptions& quant = {});
Fidelity variant_fidelity(const LayerSpec& layer, const Variant& variant, int steps, uint64_t seed,
                          const QuantOptions& quant = {});

// The emitter's test vectors: per step, the graph's inputs and outputs by role name
// (model::role_name: "hidden_in", "k_cache", ..., "hidden_out", "k_out", "v_out") as the
// runtime simulation produced them (float32), for the same seeded weights.
struct StepTensors {
  std::map<std::string, Tensor<float>> inputs;
  std::map<std::string, Tensor<float>> outputs;
};
std::vector<StepTensors> step_io(const LayerSpec& layer, const Variant& variant, const LayerWeights& weights,
                                 int steps, uint64_t seed, bool simulate_precision = false);
// The weights by role name ("q_k_v_proj", ...), float32, in the graph's [in, out] layouts.
std::map<std::string, Tensor<float>> weights_by_name(const LayerWeights& weights);

}  // namespace layoutx::model::numerics
