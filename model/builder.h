// Builds the decode-step op graph of one layer type for one variant (design.md, "A layer graph
// for one decode step contains ...").
#pragma once
#include "model/graph.h"

namespace layoutx::model {

// Contract: one new token. Shapes (H hidden, nh heads, kv kv heads, G = nh/kv, D head dim,
// N = layer.cache_entries, r = rotary dims):
//   hidden_in [1,H]; k_cache [kv,D,N] (keys stored transposed); v_cache [kv,N,D];
//   mask [1,1,N+1] additive over the keys (cache slots first, the new token last);
//   rope_cos/rope_sin [1,1,r] for the current position (absent when r == 0).
// Query head h belongs to kv head h / G (HF repeat_kv order), so q is viewed as [kv,G,D].
// fp16 graphs: f16 everywhere. Quantized graphs (w8a16, w4a16): i8/i4 projection weights,
// u16 activations, and a Convert where each f16 boundary tensor enters or leaves the graph.
// The exporters' forms (issue 34): k_layout=rows stores K as [kv,N,D] (the scores MatMuls read
// it transposed, transpose_b); kv_dtype=u8/u16 makes k/v_cache and k/v_out u8/u16 at the
// boundary (a quantized graph reads them without a Convert and quantizes the new entry with the
// cache's tied encoding; an fp16 graph converts at the boundary); weight_quant=blockN marks the
// i4 projection weights with their LPBQ block (OpNode::block).
// Throws Error if the variant is meaningless (Variant::validate) or the layer inconsistent.
LayerGraph build_layer_graph(const LayerSpec& layer, const Variant& variant);
// The layer the graph of `variant` is built for (LayerGraph::layer): `layer` with what the variant
// changes of its shape applied (sliding_cache=context: a sliding layer takes context-1 cache slots).
LayerSpec built_layer(const LayerSpec& layer, const Variant& variant);

}  // namespace layoutx::model
