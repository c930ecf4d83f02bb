// Small models of each family's layer structure for fast numerics tests: the family's norms,
// biases, q/k norms, softcap and rotary scaling, at hidden 32, 4 query heads over 2 kv heads,
// head dim 8, window 8. The softcap is 2 (not Gemma 2's 50) so that, at these small scores, the
// tanh visibly bends them.
#pragma once
#include <string>
#include <vector>

#include "model/model_spec.h"

namespace layoutx::model::numerics {

struct FamilyCase {
  std::string name;
  ModelSpec model;
};

inline ModelSpec small_family_model(Family f) {
  ModelSpec m;
  m.name = std::string("small-") + to_string(f);
  m.family = f;
  m.structure = family_structure(f);
  m.hidden = 32;
  m.intermediate = 48;
  m.heads = 4;
  m.kv_heads = 2;
  m.head_dim = 8;
  m.vocab = 100;
  m.rms_eps = 1e-6;
  m.sliding_window = 8;
  m.layer_types = {LayerType::kSliding, LayerType::kFull};
  m.rope_sliding = {10000.0, 8};
  m.rope_full = {1e6, 8};
  switch (f) {
    case Family::kSpark:
      m.activation = Activation::kGelu;
      m.head_gate = true;
      m.rope_full = {5e6, 4};  // partial rotary
      break;
    case Family::kLlama:
      m.activation = Activation::kSilu;
      m.sliding_window.reset();
      m.layer_types = {LayerType::kFull};
      // llama3 scaling with a short original context so that every band occurs at head dim 8.
      m.rope_full = {5e5, 8, RopeScaling::kLlama3, 32.0, 1.0, 4.0, 64};
      break;
    case Family::kQwen2:
    case Family::kQwen3:
      m.activation = Activation::kSilu;
      m.sliding_window.reset();
      m.layer_types = {LayerType::kFull};
      break;
    case Family::kMistral:
      m.activation = Activation::kSilu;
      m.layer_types = {LayerType::kSliding};
      break;
    case Family::kGemma2:
      m.activation = Activation::kGeluTanh;
      m.structure.query_scale = 1.0 / std::sqrt(8.0);
      m.structure.attn_softcap = 2.0;
      m.rope_full = m.rope_sliding;
      break;
    case Family::kGemma3:
      m.activation = Activation::kGeluTanh;
      m.structure.query_scale = 1.0 / std::sqrt(8.0);
      m.rope_full = {1e6, 8, RopeScaling::kLinear, 8.0};  // Gemma 3 4B's global layers
      break;
    case Family::kCohere2:
      m.activation = Activation::kSilu;
      m.rope_full = {0, 0};  // global layers: no RoPE
      m.rope_sliding = {50000.0, 8};
      break;
  }
  m.validate();
  return m;
}

inline std::vector<Family> all_families() {
  return {Family::kSpark,   Family::kLlama,  Family::kQwen2,  Family::kQwen3,
          Family::kMistral, Family::kGemma2, Family::kGemma3, Family::kCohere2};
}

}  // namespace layoutx::model::numerics
