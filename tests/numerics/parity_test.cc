// The executor, the runtime simulation and the independent reference on a small layer
// (tiny_layer.h): layouts agree with each other and with the reference, wrong graphs are
// caught, quantized precisions degrade in the expected order.
#include <gtest/gtest.h>

#include <cmath>

#include "model/builder.h"
#include "model/numerics/fidelity.h"
#include "model/numerics/reference.h"
#include "support/error.h"
#include "seeded_tiny_layer.h"

namespace layoutx::model::numerics {
namespace {

constexpr uint64_t kSeed = kTinySeed;
using Fixture = SeededTinyLayer;

// Longer than twice the window (8), so the ring wraps three times.
constexpr int kLongHistory = 25;

TEST(Parity, RingAndRollAgreeAtEveryStepOfAWrappingHistory) {
  Fixture f(LayerType::kSliding, kLongHistory);
  for (Arithmetic a : {Arithmetic::kFloat32, Arithmetic::kFloat64}) {
    const Fidelity fid = compare(f.run(preset("roll"), a), f.run(preset("ring"), a), f.in);
    EXPECT_GT(fid.min_step_snr_db, a == Arithmetic::kFloat32 ? 120.0 : 250.0) << to_string(a);
    EXPECT_EQ(fid.topk_agreement, 1.0);
  }
}

TEST(Parity, EveryAttentionFormAgreesWithTheReferenceInFloat32) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> forms{
      {"roll", {}},
      {"ring", {}},
      {"ring", {"softmax=explicit"}},
      {"score-join", {}},
      {"score-join", {"softmax=explicit"}},
      {"score-join", {"new_score=mul_reducesum"}},
      {"score-join", {"new_value=broadcast_mul"}},
      {"score-join", {"softmax=explicit", "new_score=mul_reducesum", "new_value=broadcast_mul"}},
  };
  for (LayerType t : {LayerType::kSliding, LayerType::kFull}) {
    Fixture f(t, kLongHistory);
    for (const auto& [p, sets] : forms) {
      const Variant v = parse_variant(p, sets);
      const Fidelity fid = compare(f.ref, f.run(v), f.in);
      EXPECT_GT(fid.min_step_snr_db, 120.0) << to_string(t) << " " << v.key();
      EXPECT_LT(fid.max_abs_err, 1e-5) << v.key();
      EXPECT_EQ(fid.topk_agreement, 1.0) << v.key();
      // In float64 the executor is the reference to rounding.
      EXPECT_GT(compare(f.ref, f.run(v, Arithmetic::kFloat64), f.in).min_step_snr_db, 250.0) << v.key();
    }
  }
}

TEST(Parity, FirstStepsOfASlidingLayerBeforeTheCacheFills) {
  Fixture f(LayerType::kSliding, 7);  // W - 1 steps: some cache slots are still unwritten
  for (const char* p : {"roll", "ring", "score-join"})
    EXPECT_GT(compare(f.ref, f.run(preset(p), Arithmetic::kFloat64), f.in).min_step_snr_db, 250.0) << p;
}

TEST(Parity, AGraphThatForgetsTheMaskIsCaught) {
  Fixture f(LayerType::kSliding, kLongHistory);
  const LayerGraph built = build_layer_graph(f.layer, preset("ring"));
  // Feed the mask add the scale constant instead of the mask: every slot counts, written or not.
  // (Graphs are not edited in place; the wrong one is a copy with that one edge rewired.)
  const Vertex add = built.by_name("attn/mask_add");
  const Vertex mask = built.operands(add)[1];
  ASSERT_EQ(built.op(mask).role, Role::kMask);
  LayerGraph g{Graph(), built.layer, built.variant};
  for (auto [it, end] = boost::vertices(built.graph); it != end; ++it) boost::add_vertex(built.graph[*it], g.graph);
  for (auto [it, end] = boost::edges(built.graph); it != end; ++it) {
    Vertex from = boost::source(*it, built.graph);
    const Vertex to = boost::target(*it, built.graph);
    if (from == mask && to == add) from = built.by_name("attn/scale");
    boost::add_edge(from, to, built.graph[*it], g.graph);
  }
  const Sequence wrong = f.run_graph(g);
  const Sequence first(wrong.begin(), wrong.begin() + 7), ref_first(f.ref.begin(), f.ref.begin() + 7);
  const Sequence in_first(f.in.begin(), f.in.begin() + 7);
  EXPECT_LT(compare(ref_first, first, in_first).snr_db, 60.0);  // caught while slots are unwritten
  EXPECT_LT(compare(f.ref, wrong, f.in).snr_db, 60.0);
  // Once the ring is full no slot is unwritten, and the forgotten mask no longer matters.
  const Sequence late(wrong.begin() + 8, wrong.end()), ref_late(f.ref.begin() + 8, f.ref.end());
  const Sequence in_late(f.in.begin() + 8, f.in.end());
  EXPECT_GT(compare(ref_late, late, in_late).snr_db, 120.0);
}

TEST(Parity, AFullLayerThatRotatesAllDimsIsCaught) {
  Fixture f(LayerType::kFull, kLongHistory);
  LayerSpec wrong_spec = f.layer;
  wrong_spec.rope.rotary_dims = f.layer.head_dim;  // rotate all 8 dims instead of the leading 4
  const Fidelity fid = compare(f.ref, f.run_graph(build_layer_graph(wrong_spec, preset("ring"))), f.in);
  EXPECT_LT(fid.snr_db, 60.0);
}

TEST(Parity, KeysRotatedTheWrongWayAreCaught) {
  Fixture f(LayerType::kSliding, kLongHistory);
  LayerGraph g = build_layer_graph(f.layer, preset("score-join"));
  g.graph[g.by_name("attn/k_rope/add")].kind = OpKind::kSub;  // x cos - rotate_half(x) sin: angle negated
  EXPECT_LT(compare(f.ref, f.run_graph(g), f.in).snr_db, 60.0);
}

TEST(Parity, TanhGeluIsCloseToErfButNotEqual) {
  Fixture f(LayerType::kSliding, kLongHistory);
  const Fidelity tanh = compare(f.ref, f.run(parse_variant("ring", {"gelu=tanh"}), Arithmetic::kFloat64), f.in);
  EXPECT_LT(tanh.snr_db, 120.0);  // visible, unlike rounding
  EXPECT_GT(tanh.snr_db, 40.0);   // but a close approximation
}

TEST(Parity, QuantizedPrecisionsDegradeInOrder) {
  Fixture f(LayerType::kSliding, kLongHistory);
  double last = INFINITY;
  for (Precision p : {Precision::kFp16, Precision::kW8A16, Precision::kW4A16}) {
    const Fidelity fid = compare(f.ref, f.run(preset("ring", p), Arithmetic::kFloat32, true), f.in);
    EXPECT_LT(fid.snr_db, last) << to_string(p);
    EXPECT_GT(fid.snr_db, 10.0) << to_string(p);
    last = fid.snr_db;
  }
  EXPECT_LT(last, 40.0);  // 4-bit weights are far from the reference
}

TEST(Parity, SimulationOfFp16IsNotExact) {
  Fixture f(LayerType::kSliding, 10);
  const double snr = compare(f.ref, f.run(preset("ring"), Arithmetic::kFloat32, true), f.in).snr_db;
  EXPECT_LT(snr, 90.0);  // f16 has 11 significant bits: about 6 dB per bit, well below float32
  EXPECT_GT(snr, 45.0);
}

TEST(Parity, FidelityForTheExplorerIsDeterministic) {
  const LayerSpec layer = tiny_layer(LayerType::kSliding);
  const Variant v = preset("ring", Precision::kW8A16);
  const double a = fidelity_snr_db(layer, v, 10, 5);
  EXPECT_EQ(a, fidelity_snr_db(layer, v, 10, 5));
  EXPECT_NE(a, fidelity_snr_db(layer, v, 10, 6));
  EXPECT_EQ(a, variant_fidelity(layer, v, 10, 5).snr_db);
}

TEST(Parity, StepIoGivesTheRuntimesTensorsByRoleName) {
  const LayerSpec layer = tiny_layer(LayerType::kSliding);
  const LayerWeights w = seeded_weights(layer, kSeed);
  const auto io = step_io(layer, preset("roll"), w, 10, kSeed);
  ASSERT_EQ(io.size(), 10u);
  const Sequence out = run_variant(layer, preset("roll"), w, token_inputs(layer.hidden, 10, kSeed),
                                   Arithmetic::kFloat32, false);
  const int64_t N = layer.cache_entries;
  for (int t = 0; t < 10; ++t) {
    for (const char* name : {"hidden_in", "k_cache", "v_cache", "mask", "rope_cos", "rope_sin"})
      EXPECT_TRUE(io[t].inputs.count(name)) << name;
    const auto& mask = io[t].inputs.at("mask");
    int masked = 0;
    for (int64_t j = 0; j <= N; ++j) masked += mask[j] < 0;
    EXPECT_EQ(masked, N - std::min<int64_t>(t, N)) << t;  // unwritten slots only
    EXPECT_EQ(mask[N], 0.0f);                              // the new token always counts
    EXPECT_EQ(io[t].outputs.at("k_out").shape, (Shape{layer.kv_heads, layer.head_dim, N}));
    const auto& y = io[t].outputs.at("hidden_out");
    for (int64_t i = 0; i < y.size(); ++i) EXPECT_EQ(double(y[i]), out[t][i]);
    if (t > 0) {
      EXPECT_EQ(io[t].inputs.at("k_cache").data, io[t - 1].outputs.at("k_out").data);  // roll
    }
  }
  EXPECT_EQ(weights_by_name(w).count("q_k_v_proj"), 1u);
}

TEST(Parity, AFullLayerCannotRunPastItsContext) {
  const LayerSpec layer = tiny_layer(LayerType::kFull, 16);
  const LayerWeights w = seeded_weights(layer, kSeed);
  try {
    run_variant(layer, preset("ring"), w, token_inputs(layer.hidden, 17, kSeed), Arithmetic::kFloat32, false);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("17 steps exceed it"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace layoutx::model::numerics
