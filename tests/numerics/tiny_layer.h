// A small layer of Spark2_5's shape (GQA with G = 2, head gate, gated GELU MLP) for fast
// numerics tests: hidden 32, 4 query heads, 2 kv heads, head dim 8, window 8.
#pragma once
#include "model/model_spec.h"

namespace layoutx::model::numerics {

inline LayerSpec tiny_layer(LayerType type, int ctx = 64) {
  LayerSpec s;
  s.type = type;
  s.context = ctx;
  s.hidden = 32;
  s.intermediate = 48;
  s.heads = 4;
  s.kv_heads = 2;
  s.head_dim = 8;
  s.rms_eps = 1e-6;
  s.activation = Activation::kGelu;
  s.head_gate = true;
  if (type == LayerType::kSliding) {
    s.window = 8;
    s.cache_entries = s.window - 1;
    s.rope = {10000.0, 8};  // all head dims, as Spark's sliding layers
  } else {
    s.cache_entries = ctx - 1;
    s.rope = {5e6, 4};  // the leading quarter, as Spark's full layers
  }
  return s;
}

}  // namespace layoutx::model::numerics
