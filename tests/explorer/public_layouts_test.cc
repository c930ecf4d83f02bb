// Public records as layoutx questions (explorer/public_layouts.h): the published layout in
// layoutx's axes, what is approximated said, and what cannot be priced refused with its reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "explorer/public_joint.h"
#include "explorer/public_layouts.h"
#include "explorer/public_shapes.h"
#include "tests/explorer/fake_predictor.h"
#include "model/design_space.h"

namespace layoutx::explorer {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

const costmodel::PublicTimings& shipped() {
  static const costmodel::PublicTimings t =
      costmodel::read_public_timings(std::string(LAYOUTX_CONFIG_DIR) + "/public/public-snapdragon-timings.yaml");
  return t;
}

const costmodel::PublicRecord& record(const std::string& key) {
  const auto& rs = shipped().records;
  auto it = std::find_if(rs.begin(), rs.end(), [&](const auto& r) { return r.key == key; });
  if (it == rs.end()) throw std::runtime_error("no record " + key);
  return *it;
}

TEST(PublicLayouts, ACiFloorBecomesTheExportersWholeModelLayout) {
  std::string why;
  // ExecuTorch's Llama-3.2-1B at HEAD: one graph, u8 transposed K, LPBQ b32, 8-bit LM head, SHA.
  auto q = public_question(record("E11/llama-3.2-1b/sm8750"), shipped(), "sm8750", why);
  ASSERT_TRUE(q) << why;
  EXPECT_EQ(q->model.num_layers(), 16);
  EXPECT_EQ(q->model.hidden, 2048);
  EXPECT_EQ(q->ctx, 1024);
  EXPECT_EQ(q->layout.layers_per_part, 16);  // one graph
  EXPECT_TRUE(q->layout.embed_in_first);      // ExecuTorch's model holds the embedding
  EXPECT_TRUE(q->layout.head_in_last);
  EXPECT_EQ(q->layout.head_precision, model::Precision::kW8A16);
  EXPECT_EQ(q->layout.scope, StepScope::kRunner);
  const model::Variant& v = q->layout.layers.at(model::LayerType::kFull);
  EXPECT_EQ(v.precision(), model::Precision::kW4A16);
  EXPECT_EQ(v.kv_dtype(), model::KvDtype::kU8);
  EXPECT_EQ(v.weight_quant(), model::WeightQuant::kBlock32);
  EXPECT_EQ(v.returns(), model::KvReturn::kNewEntry);
  // Single-head attention stays the published form and is priced as such (the device's heads
  // hypotheses); the question says the recipe's exceptions it does not price.
  EXPECT_EQ(v.heads(), model::HeadsForm::kPerHead);
  EXPECT_THAT(q->approximations, Not(Contains(HasSubstr("heads=per_head"))));
  EXPECT_THAT(q->approximations, Contains(HasSubstr("exception not priced: down_proj of layers 0-3")));
  EXPECT_THAT(q->approximations, Contains(HasSubstr("includes the prompt's prefill")));
}

TEST(PublicLayouts, ShardsSplitTheLayersEvenly) {
  std::string why;
  auto q = public_question(record("E11/llama-3.2-3b/sm8750"), shipped(), "sm8750", why);  // 28 layers, 3 shards
  ASSERT_TRUE(q) << why;
  EXPECT_EQ(q->layout.layers_per_part, 10);
}

TEST(PublicLayouts, WhatCannotBePricedSaysWhy) {
  std::string why;
  // Another chip's record is asked on the device and enters through the chip's factor, whose prior
  // needs both DRAM peaks.
  EXPECT_TRUE(public_question(record("E11/llama-3.2-1b/sm8650"), shipped(), "sm8750", why));
  EXPECT_NEAR(*chip_factor_prior(shipped(), "sm8750", "sm8650"), 84.8 / 76.8, 1e-12);
  EXPECT_FALSE(public_question(record("A12/llama-2-7b/qcs8550-proxy/v0.15.0"), shipped(), "sm8750", why));
  EXPECT_THAT(why, HasSubstr("another chip: qcs8550_proxy has no DRAM peak"));
  EXPECT_FALSE(public_question(record("E1/qwen2.5-0.5b/16a8w"), shipped(), "sm8750", why));
  EXPECT_THAT(why, HasSubstr("the cache inside the graph"));
  EXPECT_FALSE(public_question(record("E5/qwen3-1.7b/16a8w"), shipped(), "sm8750", why));
  EXPECT_THAT(why, HasSubstr("not for calibration: use suspect"));
  EXPECT_FALSE(public_question(record("T1/qwen3-4b/part2-L0-11/ar1/cl512"), shipped(), "x2_elite", why));
  EXPECT_THAT(why, HasSubstr("use shape_only"));
}

TEST(PublicLayouts, APublicModelIsBuiltFromItsShapes) {
  std::vector<std::string> approx;
  const model::ModelSpec q = public_model_spec(shipped().models.at("qwen3-0.6b"), approx);
  EXPECT_EQ(q.family, model::Family::kQwen3);  // q/k norms
  EXPECT_EQ(q.num_layers(), 28);
  EXPECT_EQ(q.head_dim, 128);
  EXPECT_TRUE(q.tied_embeddings);
  EXPECT_TRUE(approx.empty());
  const model::ModelSpec phi = public_model_spec(shipped().models.at("phi-4-mini"), approx);
  EXPECT_EQ(phi.family, model::Family::kLlama);
  EXPECT_THAT(approx, Contains(HasSubstr("phi-4-mini built with Llama's layer structure")));
}

// Gemma 2's alternating windows are its family's own pattern: built sliding when the context exceeds
// the window, all full when the window holds the whole context (said); Gemma 4's pattern is not read.
TEST(PublicLayouts, AGemma2ModelSlidesOnlyPastItsWindow) {
  std::vector<std::string> approx;
  const model::ModelSpec wide = public_model_spec(shipped().models.at("gemma2-2b"), approx, 8192);
  EXPECT_EQ(wide.family, model::Family::kGemma2);
  ASSERT_EQ(wide.num_layers(), 26);
  EXPECT_EQ(wide.layer_types[0], model::LayerType::kSliding);
  EXPECT_EQ(wide.layer_types[1], model::LayerType::kFull);
  EXPECT_TRUE(approx.empty());
  const model::ModelSpec narrow = public_model_spec(shipped().models.at("gemma2-2b"), approx, 1024);
  for (auto t : narrow.layer_types) EXPECT_EQ(t, model::LayerType::kFull);
  EXPECT_THAT(approx, Contains(HasSubstr("holds the whole context (1024)")));
  EXPECT_THROW(public_model_spec(shipped().models.at("gemma4-e2b"), approx, 1024), Error);
}

}  // namespace
}  // namespace layoutx::explorer

namespace layoutx::explorer {
namespace {

TEST(PublicShapes, APerGraphRecordNamesItsPartAndLayers) {
  EXPECT_EQ(record_part("part 2 (layers 0-11)"), 2);
  EXPECT_EQ(record_layers("part 4 (layers 24-35 + LM head)"), std::make_pair(24, 35));
  EXPECT_EQ(record_part("part 1 (embedding)"), 1);
  EXPECT_FALSE(record_layers("part 1 (embedding)"));
  EXPECT_FALSE(record_part("the whole model"));
  EXPECT_FALSE(record_layers("layers 9-3"));
}

// T1's part-by-part timings as ratios to its first layer part at the smallest context, each part
// priced by a transparent predictor: the published ratios are the file's, a part of as many
// layers at the same context is priced the same (ratio 1), a longer context dearer, and the
// prefill graphs are not priced, said.
TEST(PublicShapes, RatiosWithinASourceDivideByItsFirstLayerPart) {
  testing::FakePredictor fake;
  const auto sets = public_shape_ratios(fake, shipped(), costmodel::RuntimeSpec{}, "sm8750");
  ASSERT_EQ(sets.size(), 1u);
  const ShapeSet& s = sets[0];
  EXPECT_EQ(s.id, "T1");
  EXPECT_EQ(s.reference->key, "T1/qwen3-4b/part2-L0-11/ar1/cl512");
  ASSERT_EQ(s.ratios.size(), 6u);
  std::map<std::string, ShapeRatio> by;
  for (const auto& r : s.ratios) by[r.record->key] = r;
  EXPECT_NEAR(by.at("T1/qwen3-4b/part2-L0-11/ar1/cl1024").published, 7.12 / 6.97, 1e-12);
  EXPECT_NEAR(by.at("T1/qwen3-4b/part3-L12-23/ar1/cl512").predicted, 1.0, 1e-12);
  const double r1k = by.at("T1/qwen3-4b/part2-L0-11/ar1/cl1024").predicted;
  const double r4k = by.at("T1/qwen3-4b/part2-L0-11/ar1/cl4096").predicted;
  EXPECT_GT(r1k, 1.0);
  EXPECT_GT(r4k, r1k);
  EXPECT_GT(by.at("T1/qwen3-4b/part4-L24-35+lmhead/ar1/cl512").predicted, 1.0);  // the head on top
  for (const auto& r : s.ratios) EXPECT_EQ(r.low, r.high) << "one calibration has no spread";
  EXPECT_EQ(s.not_priced.size(), 7u);
  for (const auto& [r, why] : s.not_priced) EXPECT_THAT(why, HasSubstr("not a decode graph: AR 128")) << r->key;
}

// Two hypotheses that agree at small contexts and differ in how a layer's time grows with it:
// "flat" is the transparent predictor, "steep" adds 20 ms a layer at 4096 (linear in the
// context). Equal prior weights.
class TwoShapes : public costmodel::Predictor {
 public:
  costmodel::Prediction member(const model::LayerGraph& g, size_t m) const {
    costmodel::Prediction p = fake_.predict(g);
    if (m == 1) p.latency_ms += 20.0 * g.layer.context / 4096.0;
    p.low_ms = 0.95 * p.latency_ms, p.high_ms = 1.05 * p.latency_ms;
    return p;
  }
  costmodel::Prediction predict(const model::LayerGraph& g) const override {
    costmodel::Prediction p = member(g, 0);
    p.latency_ms = 0.5 * (p.latency_ms + member(g, 1).latency_ms);
    return p;
  }
  size_t hypothesis_count() const override { return 2; }
  std::vector<costmodel::HypothesisFigure> predict_each(const model::LayerGraph& g) const override {
    return {{"flat", 0.5, member(g, 0)}, {"steep", 0.5, member(g, 1)}};
  }
  std::string device() const override { return "fake-device"; }
  std::string calibration_id() const override { return "two-shapes"; }

 private:
  testing::FakePredictor fake_;
};

// T1's records of the shipped timings (no other), its layer parts' times replaced: each is
// `level` times what hypothesis `like` prices it (so the set's shape is that hypothesis's).
costmodel::PublicTimings t1_shaped_like(const TwoShapes& mixture, size_t like, double level) {
  costmodel::PublicTimings t = shipped();
  std::erase_if(t.records, [](const costmodel::PublicRecord& r) { return r.id != "T1"; });
  MixtureMembers members(mixture);
  const PricedParts parts = price_public_parts(members, t, costmodel::RuntimeSpec{}, "sm8750");
  for (auto& r : t.records)
    for (const auto& set : parts.sets)
      for (const auto& part : set.parts)
        if (part.plain && part.record->key == r.key) r.ms_per_graph = level * part.member_ms[like];
  return t;
}

// A per-graph set's plain parts weigh the hypotheses by their shape alone (issue 36: T1 as
// evidence): the set's level is a term of its own, so scaling every part leaves the weights
// where they were, and parts that grow like one hypothesis move weight to it. The embedding's
// and the head's parts stay out.
TEST(PublicJoint, APerGraphSetWeighsTheHypothesesByItsShapeNotItsLevel) {
  const TwoShapes mixture;
  const auto steep = t1_shaped_like(mixture, 1, 0.5);
  const PublicJoint a = fit_public_joint(mixture, steep, costmodel::RuntimeSpec{}, "sm8750");
  EXPECT_EQ(a.parts, 5);  // part 2 at four contexts, part 3
  int levels = 0;
  for (const auto& t : a.terms) levels += t.kind == "level" && t.key == "T1 qwen3-4b x2_elite";
  EXPECT_EQ(levels, 1);
  for (const auto& r : a.records)
    if (r.part) {
      EXPECT_THAT(r.record->key, Not(HasSubstr("lmhead"))) << "the head's part is not a plain part";
    }
  const PublicJoint a3 = fit_public_joint(mixture, t1_shaped_like(mixture, 1, 1.5), costmodel::RuntimeSpec{}, "sm8750");
  EXPECT_NEAR(a3.joint_weights[1], a.joint_weights[1], 1e-3) << "the level is the set's own";
  const PublicJoint b = fit_public_joint(mixture, t1_shaped_like(mixture, 0, 0.5), costmodel::RuntimeSpec{}, "sm8750");
  EXPECT_GT(a.joint_weights[1], 0.9) << "steep parts favour the steep hypothesis";
  EXPECT_LT(b.joint_weights[1], 0.1) << "flat parts, the flat one";
  EXPECT_EQ(a.rates + a.floors, 0);
}

}  // namespace
}  // namespace layoutx::explorer
