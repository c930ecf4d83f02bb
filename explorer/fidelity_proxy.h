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

// The oracle: SNR of a variant (float32, its precision simulated as `quant` says) against the
// float64 reference on the layer's proxy over `steps` seeded decode steps (0: the numerics'
// fidelity_history, which fills the window). Memoized per proxy shape, history, variant, seed and
// quantizer, in the process and in the user's cache folder (user_cache_folder("fidelity"), for
// this build only); skipped layers (fidelity_skip_reason) get no figure (no floor).
std::unique_ptr<FidelityOracle> make_numerics_oracle(int steps, const model::numerics::QuantOptions& quant);
// The same with the memo on disk given (a test's folder, or none).
std::unique_ptr<FidelityOracle> make_numerics_oracle(int steps, const model::numerics::QuantOptions& quant,
                                                     DiskMemo disk);

}  // namespace layoutx::explorer
