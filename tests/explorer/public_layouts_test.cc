// Public records as layoutx questions (explorer/public_layouts.h): the published layout in
// layoutx's axes, what is approximated said, and what cannot be priced refused with its reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

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

}  // namespace
}  // namespace layoutx::explorer
