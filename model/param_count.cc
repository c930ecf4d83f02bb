#include "model/param_count.h"

#include <algorithm>
#include <cmath>

#include "model/builder.h"
#include "support/error.h"

namespace layoutx::model {

namespace {

// A context every layer type of m can be built at: the sliding window (a sliding layer needs
// ctx >= window), at least 2. Weights do not depend on it.
int any_context(const ModelSpec& m) { return std::max(2, m.sliding_window.value_or(2)); }

}  // namespace

Shape embedding_shape(const ModelSpec& m) { return {m.vocab, m.hidden}; }
Shape lm_head_shape(const ModelSpec& m) { return {m.hidden, m.vocab}; }

int64_t graph_parameters(const LayerGraph& g) {
  int64_t n = 0;
  for (Vertex v : g.of_kind(OpKind::kWeight)) n += numel(g.op(v).shape);
  return n;
}

ParamCount count_parameters(const ModelSpec& m) {
  if (m.vocab <= 0) throw Error(m.name + ": vocab_size: counting the parameters needs the vocabulary size");
  ParamCount c;
  for (LayerType t : {LayerType::kSliding, LayerType::kFull}) {
    if (m.count(t) == 0) continue;
    const LayerGraph g = build_layer_graph(m.layer(t, any_context(m)), Variant{});
    const int64_t per = graph_parameters(g);
    (t == LayerType::kSliding ? c.per_sliding_layer : c.per_full_layer) = per;
    c.layers += per * m.count(t);
  }
  c.embedding = numel(embedding_shape(m));
  c.lm_head = m.tied_embeddings ? 0 : numel(lm_head_shape(m));
  c.final_norm = m.hidden;
  c.total = c.layers + c.embedding + c.lm_head + c.final_norm;
  return c;
}

StructureSummary structure_summary(const ModelSpec& m) {
  StructureSummary s;
  const LayerStructure& S = m.structure;
  s.family = to_string(m.family);
  s.norm = to_string(S.norm);
  s.activation = to_string(m.activation);
  s.head_gate = m.head_gate;
  s.qk_norm = S.qk_norm;
  s.parallel_block = S.parallel_block;
  s.sandwich_norms = S.sandwich_norms;
  s.qkv_fused = S.qkv_fused;
  s.qkv_bias = S.qkv_bias;
  s.query_scale = S.query_scale > 0 ? S.query_scale : 1.0 / std::sqrt(double(m.head_dim));
  s.attn_softcap = S.attn_softcap;
  if (m.count(LayerType::kSliding) > 0) s.rotary_dims_sliding = m.rope_sliding.rotary_dims;
  if (m.count(LayerType::kFull) > 0) s.rotary_dims_full = m.rope_full.rotary_dims;
  s.rope_scaling_full = to_string(m.rope_full.scaling);
  const LayerType t = m.count(LayerType::kFull) > 0 ? LayerType::kFull : LayerType::kSliding;
  const LayerGraph g = build_layer_graph(m.layer(t, any_context(m)), Variant{});
  s.norms_per_layer = g.count(OpKind::kRmsNorm) + g.count(OpKind::kLayerNorm);
  return s;
}

}  // namespace layoutx::model
