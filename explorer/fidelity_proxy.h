// The fidelity policy of selection: which layer the SNR is measured on (a proxy of the layer),
// when the check is skipped, and the oracle that measures it through model/numerics.
#pragma once
#include <memory>
#include <string>

#include "explorer/evaluator.h"
#include "model/model_spec.h"
#include "model/numerics/fidelity.h"
#include "support/disk_memo.h"

namespace layoutx::explorer {

// The proxy layer's hidden and MLP widths are the layer's / kProxyShrink (at least 64).
constexpr int kProxyShrink = 8;

// The layer the fidelity check runs: the attention exactly as `layer` has it (heads, kv heads,
// head dim, rotary dims, window and cache), hidden and MLP widths divided by kProxyShrink.
model::LayerSpec fidelity_proxy(const model::LayerSpec& layer);

// Why the fidelity check skips a layer ("" if it does not): the proxy keeps the layer's K/V
// cache, which grows with the context, so above the bounds (model/limits.h) it is not run.
std::string fidelity_skip_reason(const model::LayerSpec& layer);

// "fidelity skipped for full layers at ctx N (they cache M tokens, above 65536)..." when
// `oracle` is on and skips a layer type of `m` at `ctx`; "" otherwise.
std::string fidelity_skip_note(const model::ModelSpec& m, int ctx, const FidelityOracle* oracle);

// "w8 per channel, w4 block 64 (LPBQ), a16 per tensor calibrated on 8 seeded steps".
std::string quant_description(const model::numerics::QuantOptions& q);

// The version of the code that computes a fidelity figure: raise it with any change that moves
// a figure (the numerics, the history, the checkpoints, the proxy). The memo on disk is keyed
// by it (and the CPU's libm features, cpu_stamp), not by the executable, so the command line and
// the Python module share their figures.
constexpr int kFidelityCodeVersion = 2;
std::string fidelity_code_stamp();

// The oracle: SNR of a variant (float32, its precision simulated as `quant` says) against the
// float64 reference on the layer's proxy over `steps` seeded decode steps (0: the numerics'
// fidelity_history, which fills the window). Memoized per proxy shape, history, variant, seed and
// quantizer, in the process and in the user's cache folder (user_cache_folder("fidelity"),
// stamped with fidelity_code_stamp()); a computation past the first second prints a progress
// line per figure (support/progress.h); skipped layers (fidelity_skip_reason) get no figure (no floor).
std::unique_ptr<FidelityOracle> make_numerics_oracle(int steps, const model::numerics::QuantOptions& quant);
// The same with the memo on disk given (a test's folder, or none).
std::unique_ptr<FidelityOracle> make_numerics_oracle(int steps, const model::numerics::QuantOptions& quant,
                                                     DiskMemo disk);

}  // namespace layoutx::explorer
