// A small hybrid model's layer types for fast emit tests: hidden 64, 4 query heads over 2 kv
// heads of 16 dims, intermediate 96, head gate, erf GELU; sliding window 8 (cache 7, all 16
// dims rotated, theta 1e4), full at ctx 12 (cache 11, leading 4 dims rotated, theta 5e6):
// Spark's structure at toy sizes.
#pragma once
#include <string>
#include <vector>

#include "model/model_spec.h"
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

// Every meaningful variant: all axis combinations that Variant::validate accepts.
inline std::vector<model::Variant> all_variants() {
  std::vector<model::Variant> out;
  std::vector<std::vector<std::string>> combos = {{}};
  for (const auto& axis : model::axis_names()) {
    std::vector<std::vector<std::string>> next;
    for (const auto& c : combos)
      for (const auto& v : model::axis_values(axis)) {
        auto d = c;
        d.push_back(axis + "=" + v);
        next.push_back(d);
      }
    combos = std::move(next);
  }
  for (const auto& sets : combos) {
    try {
      out.push_back(model::parse_variant("roll", sets));
    } catch (...) {
      // meaningless combination (e.g. new_score set under join=keys)
    }
  }
  // parse_variant may canonicalize equal variants from different spellings: dedupe by key.
  std::vector<model::Variant> unique;
  for (const auto& v : out) {
    bool seen = false;
    for (const auto& u : unique) seen = seen || u.key() == v.key();
    if (!seen) unique.push_back(v);
  }
  return unique;
}

}  // namespace layoutx::emit::testing
