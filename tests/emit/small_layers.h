// A small hybrid model's layer types for fast emit tests: hidden 64, 4 query heads over 2 kv
// heads of 16 dims, intermediate 96, head gate, erf GELU; sliding window 8 (cache 7, all 16
// dims rotated, theta 1e4), full at ctx 12 (cache 11, leading 4 dims rotated, theta 5e6):
// Spark's structure at toy sizes.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "model/model_spec.h"
#include "model/design_space.h"
#include "model/variant.h"

namespace layoutx::emit::testing {

inline model::LayerSpec small_layer(model::LayerType t) {
  model::LayerSpec L;
  L.type = t;
  L.hidden = 64;
  L.intermediate = 96;
  L.heads = 4;
  L.kv_heads = 2;
  L.head_dim = 16;
  L.head_gate = true;
  L.activation = model::Activation::kGelu;
  if (t == model::LayerType::kSliding) {
    L.window = 8;
    L.context = 32;
    L.cache_entries = 7;
    L.rope = {1e4, 16};
  } else {
    L.context = 12;
    L.cache_entries = 11;
    L.rope = {5e6, 4};
  }
  return L;
}

// The same sizes in another family's layer structure (model_spec.h family_structure) with its
// activation and a meaningful setting of each of its options: Qwen2's biases, Gemma's
// query scale and a softcap of 2 (bends these small scores), Gemma 3's linear and Llama's llama3
// rotary scaling, Cohere's RoPE-less full layers.
inline model::LayerSpec small_family_layer(model::Family f, model::LayerType t) {
  model::LayerSpec L = small_layer(t);
  L.structure = model::family_structure(f);
  L.head_gate = f == model::Family::kSpark;
  L.rope.rotary_dims = 16;
  switch (f) {
    case model::Family::kSpark: return small_layer(t);
    case model::Family::kLlama: L.rope = {5e5, 16, model::RopeScaling::kLlama3, 32.0, 1.0, 4.0, 64}; [[fallthrough]];
    case model::Family::kQwen2:
    case model::Family::kQwen3:
    case model::Family::kMistral: L.activation = model::Activation::kSilu; break;
    case model::Family::kGemma2:
      L.structure.attn_softcap = 2.0;
      [[fallthrough]];
    case model::Family::kGemma3:
      L.activation = model::Activation::kGeluTanh;
      L.structure.query_scale = 0.3;
      if (f == model::Family::kGemma3 && t == model::LayerType::kFull)
        L.rope = {1e6, 16, model::RopeScaling::kLinear, 8.0};
      break;
    case model::Family::kCohere2:
      L.activation = model::Activation::kSilu;
      if (t == model::LayerType::kFull) L.rope = {0, 0};
      break;
  }
  return L;
}

// A covering set of the meaningful variants at every precision (the design-space table's
// enumerator): every attention layout with the exporters' forms at their defaults, and every
// combination of the exporters' forms on each preset. Every value of every axis is in it, each
// exporter form beside each preset; the whole product (4320 graphs a layer type) is left out to
// keep the emit tests in seconds.
inline std::vector<model::Variant> covering_variants() {
  const auto& space = model::design_space();
  const auto exporter = space.exporter_axes();
  auto is_exporter = [&](const std::string& a) { return std::find(exporter.begin(), exporter.end(), a) != exporter.end(); };
  std::vector<model::Variant> out;
  for (const auto& p : model::axis_values("precision")) {
    const model::Variant base = model::parse_variant("roll", {"precision=" + p});
    std::vector<model::Variant> presets;
    for (const char* name : {"roll", "ring", "score-join"}) presets.push_back(model::parse_variant(name, {"precision=" + p}));
    for (const auto& v : space.variants(base)) {
      bool exporter_defaults = true, on_a_preset = false;
      for (const auto& a : exporter) exporter_defaults = exporter_defaults && model::axis_value(v, a) == model::axis_value(base, a);
      for (const auto& q : presets) {
        bool same = true;
        for (const auto& a : space.axes())
          if (!is_exporter(a.name)) same = same && model::axis_value(v, a.name) == model::axis_value(q, a.name);
        on_a_preset = on_a_preset || same;
      }
      if (exporter_defaults || on_a_preset) out.push_back(v);
    }
  }
  return out;
}

}  // namespace layoutx::emit::testing
