// A part (several decoder layers in one graph, emit/part.h): its ONNX names, what it refuses,
// and the part run in ONNX Runtime against the executor run layer by layer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "emit/onnx_writer.h"
#include "emit/ort_runner.h"
#include "emit/part.h"
#include "model/builder.h"
#include "model/numerics/fidelity.h"
#include "support/error.h"
#include "tests/emit/small_layers.h"
#include "tests/error_message.h"
#include "tests/temp_dir.h"

namespace layoutx::emit {
namespace {

using model::LayerType;
using ::testing::HasSubstr;

// Layers first..first+types.size()-1 of the small hybrid model, each type at one preset.
Part small_part(const std::vector<LayerType>& types, const char* sliding_preset = "ring", const char* full_preset = "ring",
                int first = 0) {
  Part p;
  p.name = "part_00";
  for (size_t i = 0; i < types.size(); ++i) {
    PartLayer l;
    l.index = first + static_cast<int>(i);
    const auto L = testing::small_layer(types[i]);
    l.graph = std::make_unique<model::LayerGraph>(
        model::build_layer_graph(L, model::preset(types[i] == LayerType::kSliding ? sliding_preset : full_preset)));
    l.weights = model::numerics::seeded_weights(L, 40 + static_cast<uint64_t>(l.index));
    p.layers.push_back(std::move(l));
  }
  return p;
}

std::vector<std::string> names(const std::vector<TensorSpec>& ts) {
  std::vector<std::string> r;
  for (const auto& t : ts) r.push_back(t.name);
  return r;
}

TEST(Part, TheHiddenStatePassesInsideAndEachTypeSharesItsMaskAndRotaryTables) {
  const Part p = small_part({LayerType::kSliding, LayerType::kSliding, LayerType::kFull});
  const auto sig = part_io_signature(p);
  EXPECT_EQ(names(sig.inputs),
            (std::vector<std::string>{"hidden_in", "layer0_k_cache", "layer0_v_cache", "sliding_mask", "sliding_rope_cos",
                                      "sliding_rope_sin", "layer1_k_cache", "layer1_v_cache", "layer2_k_cache",
                                      "layer2_v_cache", "full_mask", "full_rope_cos", "full_rope_sin"}));
  // Each layer's outputs in its graph's order; hidden_out once, from the last layer.
  EXPECT_EQ(names(sig.outputs), (std::vector<std::string>{"layer0_k_out", "layer0_v_out", "layer1_k_out", "layer1_v_out",
                                                          "hidden_out", "layer2_k_out", "layer2_v_out"}));
  // The ONNX has the same boundary; layer 0's hidden_out is the tensor layer 1 reads.
  const onnx::ModelProto m = part_to_onnx(p);
  std::vector<std::string> in, out;
  for (const auto& vi : m.graph().input()) in.push_back(vi.name());
  for (const auto& vi : m.graph().output()) out.push_back(vi.name());
  EXPECT_EQ(in, names(sig.inputs));
  EXPECT_EQ(out, names(sig.outputs));
  bool fed = false;
  for (const auto& n : m.graph().node())
    if (n.name().rfind("layer1/", 0) == 0)
      fed |= std::find(n.input().begin(), n.input().end(), "layer0_hidden_out") != n.input().end();
  EXPECT_TRUE(fed);
}

TEST(Part, WhatCannotBeOneGraphIsRefusedNamingTheLayer) {
  Part gap = small_part({LayerType::kSliding, LayerType::kSliding});
  gap.layers[1].index = 5;
  EXPECT_THAT(layoutx::testing::error_message([&] { part_to_onnx(gap); }), HasSubstr("part_00: layer 5: a part's layers are consecutive"));
  // Two sliding layers at different layouts would need two masks of one name.
  const Part mixed = [] {
    Part p = small_part({LayerType::kSliding});
    Part q = small_part({LayerType::kSliding}, "roll", "ring", 1);
    p.layers.push_back(std::move(q.layers[0]));
    return p;
  }();
  EXPECT_THAT(layoutx::testing::error_message([&] { part_io_signature(mixed); }), HasSubstr("layer 1: its sliding layout differs from layer 0's"));
  Part empty;
  empty.name = "part_03";
  EXPECT_THAT(layoutx::testing::error_message([&] { part_step_io(empty, 1, 1); }), HasSubstr("part_03: a part needs at least one layer"));
}

TEST(Part, TheStepsOfAOneLayerPartAreTheLayersOwn) {
  const Part p = small_part({LayerType::kFull});
  const auto part = part_step_io(p, 3, 7);
  const auto& g = *p.layers[0].graph;
  const auto layer = model::numerics::step_io(g.layer, g.variant, p.layers[0].weights, 3, 7);
  ASSERT_EQ(part.size(), 3u);
  for (size_t t = 0; t < 3; ++t) {
    EXPECT_EQ(part[t].first.at("full_mask").data, layer[t].inputs.at("mask").data);
    EXPECT_EQ(part[t].first.at("layer0_k_cache").data, layer[t].inputs.at("k_cache").data);
    EXPECT_EQ(part[t].second.at("hidden_out").data, layer[t].outputs.at("hidden_out").data);
    EXPECT_EQ(part[t].second.at("layer0_v_out").data, layer[t].outputs.at("v_out").data);
  }
}

TEST(Part, RunsInOnnxRuntimeAsTheExecutorRunsItsLayersOneAfterAnother) {
  if (auto why = ort_unavailable_reason()) GTEST_SKIP() << "ONNX Runtime tests skipped: " << *why;
  const layoutx::test::TempDir dir("part-ort");
  // The small model's first four layers (three sliding, one full) as one part, at two layouts:
  // ring slots and window returns; 11 steps wrap the sliding window (cache 7) and fill the
  // full layer's cache (11 entries) to its last slot.
  for (const char* sliding : {"ring", "roll"}) {
    const Part p = small_part({LayerType::kSliding, LayerType::kSliding, LayerType::kSliding, LayerType::kFull}, sliding);
    const Validation v = validate_part_in_ort(p, 11, 5, (dir.path() / sliding).string());
    EXPECT_EQ(v.steps, 11);
    EXPECT_GT(v.hidden.snr_db, 100.0) << sliding;
    EXPECT_GT(v.kv_snr_db, 100.0) << sliding;
    EXPECT_EQ(v.hidden.top1_agreement, 1.0) << sliding;
    std::printf("[figure] part of 4 layers (sliding %s) in ORT vs the executor: hidden %.1f dB, kv %.1f dB\n", sliding,
                v.hidden.snr_db, v.kv_snr_db);
  }
}

}  // namespace
}  // namespace layoutx::emit
