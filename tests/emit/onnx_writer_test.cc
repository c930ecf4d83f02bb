// The ONNX writer: a covering set of the meaningful variants of a small model's sliding and full layers passes
// the ONNX checker and strict shape inference with layoutx's shapes; node counts follow the
// op-by-op mapping; bad options and broken graphs are caught with a clear message.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <memory>

#include "emit/io_signature.h"
#include "emit/onnx_writer.h"
#include "model/builder.h"
#include "support/error.h"
#include "tests/emit/small_layers.h"

namespace layoutx::emit {
namespace {

using model::LayerType;
using model::OpKind;
using testing::covering_variants;
using testing::small_layer;

// Seeded weights of the graph's layer, held for the test's lifetime (the source keeps a reference).
LayerWeightsSource seeded(const model::LayerGraph& g, uint64_t seed) {
  static std::vector<std::unique_ptr<model::numerics::LayerWeights>> keep;
  keep.push_back(std::make_unique<model::numerics::LayerWeights>(model::numerics::seeded_weights(g.layer, seed)));
  return LayerWeightsSource(*keep.back());
}

std::map<std::string, int> node_counts(const onnx::ModelProto& m) {
  std::map<std::string, int> c;
  for (const auto& n : m.graph().node()) ++c[n.op_type()];
  return c;
}

TEST(OnnxWriter, UsesTheHighestOpsetTheLibraryKnows) {
  EXPECT_GE(max_supported_opset(), 17);  // ONNX 1.12: 17
  auto g = model::build_layer_graph(small_layer(LayerType::kSliding), model::preset("ring"));
  auto m = to_onnx(g, seeded(g, 1));
  ASSERT_EQ(m.opset_import_size(), 1);
  EXPECT_EQ(m.opset_import(0).version(), std::min(max_supported_opset(), 17));
}

// The covering set (small_layers.h) holds every explored value of every axis at every precision
// where the axis applies: 60 attention layouts a precision, and the exporters' forms' 48
// combinations at w4a16 (12 at fp16 and w8a16) on each of the 3 presets.
TEST(OnnxWriter, TheCoveringSetHoldsEveryValueOfEveryAxis) {
  const auto variants = covering_variants();
  EXPECT_EQ(variants.size(), 3u * 60 + 3 * 48 + 2 * 3 * 12 - 3 * 3);
  for (const auto& a : model::design_space().axes()) {
    if (!a.explored || !a.priced) continue;
    for (const auto& value : a.values) {
      if (std::find(a.unpriced_values.begin(), a.unpriced_values.end(), value) != a.unpriced_values.end()) continue;
      bool seen = false;
      for (const auto& v : variants) seen = seen || model::axis_value(v, a.name) == value;
      EXPECT_TRUE(seen) << a.name << "=" << value;
    }
  }
}

TEST(OnnxWriter, EveryCoveringVariantPassesCheckerAndShapeInference) {
  const auto variants = covering_variants();
  int checked = 0;
  for (auto t : {LayerType::kSliding, LayerType::kFull}) {
    for (const auto& v : variants) {
      auto g = model::build_layer_graph(small_layer(t), v);
      auto m = to_onnx(g, seeded(g, 7));
      EXPECT_NO_THROW(check_onnx(m, g)) << model::to_string(t) << " " << v.key();
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2 * static_cast<int>(variants.size()));
}

TEST(OnnxWriter, NodesFollowTheOpByOpMapping) {
  for (auto t : {LayerType::kSliding, LayerType::kFull}) {
    for (const auto& v : covering_variants()) {
      auto g = model::build_layer_graph(small_layer(t), v);
      auto c = node_counts(to_onnx(g, seeded(g, 3)));
      const int gelu = g.count(OpKind::kGelu), norm = g.count(OpKind::kRmsNorm);
      const bool erf = v.gelu() == model::GeluForm::kErf;
      SCOPED_TRACE(v.key());
      EXPECT_EQ(c["Identity"], g.count(OpKind::kOutput));
      EXPECT_EQ(c["Cast"], g.count(OpKind::kConvert));
      EXPECT_EQ(c["MatMul"], g.count(OpKind::kMatMul));
      EXPECT_EQ(c["Softmax"], g.count(OpKind::kSoftmax));
      EXPECT_EQ(c["Slice"], g.count(OpKind::kSlice));
      EXPECT_EQ(c["Concat"], g.count(OpKind::kConcat));
      EXPECT_EQ(c["Reshape"], g.count(OpKind::kReshape));
      EXPECT_EQ(c["ReduceMax"], g.count(OpKind::kReduceMax));
      EXPECT_EQ(c["ReduceSum"], g.count(OpKind::kReduceSum));
      EXPECT_EQ(c["ReduceMean"], norm);                   // one per RmsNorm
      EXPECT_EQ(c["Sqrt"], norm);
      EXPECT_EQ(c["Erf"], erf ? gelu : 0);
      EXPECT_EQ(c["Tanh"], erf ? 0 : gelu);
      // Mul: layoutx's own, 2 per RmsNorm (square, weight), erf GELU 3, tanh GELU 6.
      EXPECT_EQ(c["Mul"], g.count(OpKind::kMul) + 2 * norm + gelu * (erf ? 3 : 6));
      // Add: layoutx's own, 1 per RmsNorm (eps), 1 per GELU (1 + .), tanh GELU 1 more (x + c x^3),
      // 1 per masked Softmax (its folded mask add: a Softmax op with the mask as a second operand).
      int masked = 0;
      for (model::Vertex s : g.of_kind(OpKind::kSoftmax)) masked += g.operands(s).size() == 2;
      EXPECT_EQ(masked > 0, v.softmax() == model::SoftmaxForm::kMasked);
      EXPECT_EQ(c["Add"], g.count(OpKind::kAdd) + norm + gelu * (erf ? 1 : 2) + masked);
      EXPECT_EQ(c["Div"], g.count(OpKind::kDiv) + norm);
    }
  }
}

// heads=per_head and projection=conv1x1 (issue 34): checker and shape inference pass; a 1x1
// Conv per projection node with kernel_shape 1x1, its weight initializer [out, in, 1, 1] holding
// the role's [in, out] tensor transposed; per_head's weights are one initializer per role.
TEST(OnnxWriter, PerHeadAndConvFormsFollowTheMapping) {
  for (auto t : {LayerType::kSliding, LayerType::kFull})
    for (const char* p : {"roll", "ring", "score-join"})
      for (const std::vector<std::string>& sets : std::vector<std::vector<std::string>>{
               {"heads=per_head"}, {"projection=conv1x1"}, {"heads=per_head", "projection=conv1x1", "precision=w4a16"}}) {
        auto g = model::build_layer_graph(small_layer(t), model::parse_variant(p, sets));
        SCOPED_TRACE(g.variant.key());
        auto m = to_onnx(g, seeded(g, 9));
        EXPECT_NO_THROW(check_onnx(m, g));
        auto c = node_counts(m);
        EXPECT_EQ(c["Conv"], g.count(OpKind::kConv));
        EXPECT_EQ(c["MatMul"], g.count(OpKind::kMatMul));
        EXPECT_EQ(c["Slice"], g.count(OpKind::kSlice));
        EXPECT_EQ(c["Concat"], g.count(OpKind::kConcat));
        EXPECT_EQ(c["Softmax"], g.count(OpKind::kSoftmax));
        std::set<std::string> inits;
        for (const auto& i : m.graph().initializer()) EXPECT_TRUE(inits.insert(i.name()).second) << i.name();
      }
  const auto L = small_layer(LayerType::kSliding);
  auto g = model::build_layer_graph(L, model::parse_variant("ring", {"projection=conv1x1"}));
  const auto w = model::numerics::seeded_weights(L, 4);
  auto m = to_onnx(g, LayerWeightsSource(w));
  int convs = 0;
  for (const auto& n : m.graph().node())
    if (n.op_type() == "Conv") {
      ++convs;
      ASSERT_EQ(n.attribute_size(), 1);
      EXPECT_EQ(n.attribute(0).name(), "kernel_shape");
      EXPECT_EQ(n.attribute(0).ints_size(), 2);
    }
  EXPECT_EQ(convs, 6);
  const auto& down = w.at(model::Role::kMlpDown);  // [I, H]
  int found = 0;
  for (const auto& i : m.graph().initializer()) {
    if (i.name() != "down_proj") continue;
    ++found;
    ASSERT_EQ(i.dims_size(), 4);
    EXPECT_EQ(i.dims(0), down.shape[1]);
    EXPECT_EQ(i.dims(1), down.shape[0]);
    const float* f = reinterpret_cast<const float*>(i.raw_data().data());
    EXPECT_EQ(f[1], static_cast<float>(down.data[static_cast<size_t>(down.shape[1])]));  // [0, 1] = w[1, 0]
  }
  EXPECT_EQ(found, 1);
}

TEST(OnnxWriter, GraphIoIsNamedByRoleAndFloat32) {
  auto g = model::build_layer_graph(small_layer(LayerType::kFull), model::preset("ring", model::Precision::kW4A16));
  auto m = to_onnx(g, seeded(g, 1));
  std::vector<std::string> in, out;
  for (const auto& i : m.graph().input()) {
    in.push_back(i.name());
    EXPECT_EQ(i.type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
  }
  for (const auto& o : m.graph().output()) out.push_back(o.name());
  EXPECT_EQ(in, (std::vector<std::string>{"hidden_in", "k_cache", "v_cache", "mask", "rope_cos", "rope_sin"}));
  EXPECT_EQ(out, (std::vector<std::string>{"hidden_out", "k_out", "v_out"}));
  // The signature lists the same tensors with layoutx's shapes: ring returns one entry.
  auto sig = io_signature(g);
  ASSERT_EQ(sig.outputs.size(), 3u);
  EXPECT_EQ(sig.outputs[1].shape, (model::Shape{2, 16, 1}));
  EXPECT_NE(sig.outputs[1].meaning.find("append at slot t"), std::string::npos);
  EXPECT_EQ(sig.inputs[1].shape, (model::Shape{2, 16, 11}));
}

TEST(OnnxWriter, WeightsAreInitializersOfTheGraphShapes) {
  auto g = model::build_layer_graph(small_layer(LayerType::kSliding), model::preset("roll"));
  auto m = to_onnx(g, seeded(g, 5));
  for (const auto& t : m.graph().initializer()) {
    if (t.name() != "q_k_v_proj") continue;
    ASSERT_EQ(t.dims_size(), 2);
    EXPECT_EQ(t.dims(0), 64);
    EXPECT_EQ(t.dims(1), (4 + 2 * 2) * 16);
    EXPECT_EQ(t.raw_data().size(), 64u * 128 * 4);
    return;
  }
  FAIL() << "no q_k_v_proj initializer";
}

TEST(OnnxWriter, RejectsAnOpsetOutsideTheSupportedRange) {
  auto g = model::build_layer_graph(small_layer(LayerType::kSliding), model::preset("roll"));
  try {
    to_onnx(g, seeded(g, 1), {.opset = 11, .graph_name = ""});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("opset 11 is outside the supported 13.."), std::string::npos) << e.what();
  }
}

TEST(OnnxWriter, CheckCatchesAShapeLayoutxDisagreesWith) {
  auto g = model::build_layer_graph(small_layer(LayerType::kSliding), model::preset("roll"));
  auto m = to_onnx(g, seeded(g, 1));
  // A graph whose layoutx shape is wrong: the inferred ONNX shape exposes it.
  g.graph[g.by_name("attn/scores")].shape = {2, 2, 7};
  try {
    check_onnx(m, g);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'attn/scores' is [2,2,8], layoutx says [2,2,7]"), std::string::npos) << e.what();
  }
}

TEST(OnnxWriter, CheckerRejectsABrokenModel) {
  auto g = model::build_layer_graph(small_layer(LayerType::kSliding), model::preset("roll"));
  auto m = to_onnx(g, seeded(g, 1));
  m.mutable_graph()->mutable_node(0)->set_input(0, "no_such_tensor");
  try {
    check_onnx(m, g);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("onnx checker"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace layoutx::emit
