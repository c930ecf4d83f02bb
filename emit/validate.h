// Validation of an emitted model: ONNX Runtime's outputs against layoutx's reference executor
// (model/numerics, float32) over a multi-step history. The executor side runs the numerics
// runtime simulation; the ORT side is driven by LayerRuntime (history.h), which plays the
// device runtime's part for the cache between ORT runs (window returns become the next cache;
// new entries are written into their ring/append slot), so both the graph and the cache
// contract the README documents are checked.
#pragma once
#include <cstdint>
#include <string>

#include "emit/weights.h"
#include "model/graph.h"
#include "model/numerics/fidelity.h"
#include "model/numerics/weights.h"

namespace layoutx::emit {

struct Validation {
  int steps = 0;
  model::numerics::Fidelity hidden;  // ORT hidden_out vs the executor's, every step
  double kv_snr_db = 0;              // ORT k_out and v_out vs the executor's, every step (dB)
  double kv_max_abs_err = 0;
};

// Emits `g` with `weights`, runs it in ORT for `steps` tokens (numerics::token_inputs(seed)),
// and compares with the executor (float32) on the same history. `work_dir` holds the model and
// the per-step tensor files. Throws Error when ORT is unavailable or a run fails.
// qdq_cache: a u8 cache (kv_dtype=u8) is emitted in its QDQ form (QuantizeLinear ->
// DequantizeLinear at each u8 Convert, OnnxOptions::cache_ranges) with ranges calibrated on the
// history's own steps, and the executor simulates the same encodings (simulate_cache_codes), so
// the comparison checks the tied cache encoding too; otherwise the Converts are Casts.
Validation validate_in_ort(const model::LayerGraph& g, const model::numerics::LayerWeights& weights, int steps,
                           uint64_t seed, const std::string& work_dir, bool qdq_cache = false);

}  // namespace layoutx::emit
