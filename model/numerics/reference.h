// The independent reference: one layer written directly in float64 from the model's
// definition, without the op graph (HF transformers semantics): pre-norm RMSNorm; fused QKV;
// partial NeoX RoPE on the leading rotary dims, frequencies theta^(-2i/r); GQA (query head h
// reads kv head h / G); sliding layers attend to the last W keys including the current one,
// full layers to every past key; head-wise gate sigmoid(x_norm g_proj) per head before
// out_proj; residual; post-norm; gated MLP down(act(gate x) * up x) with the model's own
// activation; residual. It keeps its own full K/V history.
#pragma once
#include "model/model_spec.h"
#include "model/numerics/runtime.h"
#include "model/numerics/weights.h"

namespace layoutx::model::numerics {

class ReferenceLayer {
 public:
  // Throws Error if a weight is missing or mis-shaped.
  ReferenceLayer(const LayerSpec& layer, const LayerWeights& weights);
  // The next token (position = tokens seen so far): returns its hidden output.
  std::vector<double> step(const std::vector<double>& x);
  // The next token's K/V only (what a later step reads of it), without its attention and MLP.
  void append(const std::vector<double>& x);

 private:
  // The token's normed input and [q | k | v] (q and k normed and rotated); appends its K/V.
  void project(const std::vector<double>& x, std::vector<double>& xn, std::vector<double>& qkv);
  LayerSpec layer_;
  const LayerWeights& w_;
  std::vector<std::vector<double>> keys_, values_;  // per position: [kv_heads * head_dim], rotated keys
};

// The reference over a token sequence: hidden_out per step.
Sequence run_reference(const LayerSpec& layer, const LayerWeights& weights, const Sequence& hidden_in);
// The same outputs at the `measured` steps only (ascending): the steps between contribute
// their K/V alone.
Sequence run_reference_at(const LayerSpec& layer, const LayerWeights& weights, const Sequence& hidden_in,
                          const std::vector<int>& measured);

}  // namespace layoutx::model::numerics
