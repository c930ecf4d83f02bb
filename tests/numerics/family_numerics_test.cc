// Each family's layer: the executor (running the built graph) against the independent float64
// reference (reference.cc, written from the family's definition without the graph) over a
// history longer than twice the window; and a reference of another structure is far from it,
// so the agreement is not the executor compared with itself.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "family_layers.h"
#include "model/builder.h"
#include "model/numerics/fidelity.h"
#include "model/numerics/reference.h"

namespace layoutx::model::numerics {
namespace {

constexpr uint64_t kSeed = 23;
constexpr int kSteps = 25;  // > 2 windows: the ring wraps; the full layer at ctx 32 holds them all

// The layouts, with the model's own GELU form (the reference computes the checkpoint's).
std::vector<Variant> layouts(Activation a) {
  std::vector<std::string> own;
  if (a == Activation::kGeluTanh) own.push_back("gelu=tanh");
  auto with = [&](std::vector<std::string> s) {
    s.insert(s.end(), own.begin(), own.end());
    return s;
  };
  return {parse_variant("roll", with({})), parse_variant("ring", with({})),
          parse_variant("score-join", with({"softmax=explicit"}))};
}

TEST(FamilyNumerics, ExecutorMatchesTheFloat64ReferenceOverAHistory) {
  for (Family f : all_families()) {
    const ModelSpec m = small_family_model(f);
    for (LayerType t : {LayerType::kSliding, LayerType::kFull}) {
      if (m.count(t) == 0) continue;
      const LayerSpec L = m.layer(t, 32);
      const LayerWeights w = seeded_weights(L, kSeed);
      const Sequence in = token_inputs(L.hidden, kSteps, kSeed);
      const Sequence ref = run_reference(L, w, in);
      for (const Variant& v : layouts(L.activation)) {
        const LayerGraph g = build_layer_graph(L, v);
        const Fidelity fd = compare(ref, simulate<double>(g, w, in), in);
        const Fidelity ff = compare(ref, simulate<float>(g, w, in), in);
        std::cout << to_string(f) << " " << to_string(t) << " " << v.key() << ": float64 " << fd.min_step_snr_db
                  << " dB, float32 " << ff.min_step_snr_db << " dB\n";
        EXPECT_GE(fd.min_step_snr_db, 250.0) << to_string(f) << " " << to_string(t) << " " << v.key();
        EXPECT_GE(ff.min_step_snr_db, 120.0) << to_string(f) << " " << to_string(t) << " " << v.key();
      }
    }
  }
}

// Each structural difference changes the output: the reference built with the difference
// switched off is far from the executor of the family's graph.
TEST(FamilyNumerics, EachStructuralDifferenceIsVisible) {
  struct Off {
    Family f;
    const char* what;
    void (*off)(LayerSpec&);
  };
  const Off cases[] = {
      {Family::kGemma3, "norm (1 + w)", [](LayerSpec& L) { L.structure.norm = NormKind::kRms; }},
      {Family::kGemma3, "sandwich norms", [](LayerSpec& L) { L.structure.sandwich_norms = false; }},
      {Family::kGemma3, "q/k norm", [](LayerSpec& L) { L.structure.qk_norm = false; }},
      {Family::kGemma3, "linear rope scaling", [](LayerSpec& L) { L.rope.scaling = RopeScaling::kNone; }},
      {Family::kGemma2, "softcap", [](LayerSpec& L) { L.structure.attn_softcap = 0; }},
      {Family::kQwen2, "q/k/v biases", [](LayerSpec& L) { L.structure.qkv_bias = false; }},
      {Family::kQwen3, "q/k norm", [](LayerSpec& L) { L.structure.qk_norm = false; }},
      {Family::kLlama, "llama3 rope scaling", [](LayerSpec& L) { L.rope.scaling = RopeScaling::kNone; }},
      {Family::kLlama, "silu", [](LayerSpec& L) { L.activation = Activation::kGelu; }},
      {Family::kCohere2, "layer norm", [](LayerSpec& L) { L.structure.norm = NormKind::kRms; }},
      {Family::kCohere2, "parallel block", [](LayerSpec& L) { L.structure.parallel_block = false; }},
  };
  for (const Off& c : cases) {
    const ModelSpec m = small_family_model(c.f);
    const LayerType t = m.count(LayerType::kFull) ? LayerType::kFull : LayerType::kSliding;
    LayerSpec L = m.layer(t, 32);
    // Cohere's global layers have no RoPE: test its structure on the sliding layer.
    if (c.f == Family::kCohere2) L = m.layer(LayerType::kSliding, 32);
    const LayerWeights w = seeded_weights(L, kSeed);
    const Sequence in = token_inputs(L.hidden, kSteps, kSeed);
    const Sequence got = simulate<double>(build_layer_graph(L, layouts(L.activation)[1]), w, in);
    LayerSpec other = L;
    c.off(other);
    LayerWeights w_other = w;
    if (!other.structure.qkv_bias) {
      w_other.erase(Role::kQBias), w_other.erase(Role::kKBias), w_other.erase(Role::kVBias);
    }
    if (!other.structure.parallel_block && L.structure.parallel_block) w_other[Role::kPostNorm] = w.at(Role::kInputNorm);
    const Fidelity fid = compare(run_reference(other, w_other, in), got, in);
    EXPECT_LT(fid.delta_snr_db, 60.0) << to_string(c.f) << " without " << c.what;
  }
}

}  // namespace
}  // namespace layoutx::model::numerics
