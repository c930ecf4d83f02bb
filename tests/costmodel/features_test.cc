// Formula-shaped tests of lowering and features on Spark-X2.5-1.7B's layers:
// H=2048, 8 query heads, 2 kv heads (G=4), head dim D=256, intermediate I=6656, window 512.
#include <gtest/gtest.h>

#include "costmodel/features.h"
#include "costmodel/lowering.h"
#include "model/analysis.h"
#include "model/builder.h"
#include "model/model_loader.h"

namespace layoutx::costmodel {
namespace {

constexpr int64_t H = 2048, NH = 8, KV = 2, G = 4, D = 256, I = 6656, PAD = 32;

model::LayerGraph spark(model::LayerType t, const std::string& layout, model::Precision p, int ctx = 4096,
                        std::vector<std::string> sets = {}) {
  model::ModelSpec m = model::load_model("spark-x2.5-1.7b");
  sets.push_back(std::string("precision=") + model::to_string(p));
  return model::build_layer_graph(m.layer(t, ctx), model::parse_variant(layout, sets));
}

const LoweredOp& find(const std::vector<LoweredOp>& ops, const std::string& name) {
  for (const auto& op : ops)
    if (op.name == name) return op;
  throw std::runtime_error("no lowered op " + name);
}
int count_class(const std::vector<LoweredOp>& ops, OpClass c) {
  int n = 0;
  for (const auto& op : ops) n += op.op_class == c;
  return n;
}

TEST(Lowering, ViewsAndDataAreNotOps) {
  auto g = spark(model::LayerType::kSliding, "roll", model::Precision::kFp16);
  auto ops = lower(g);
  for (const auto& op : ops) {
    EXPECT_NE(op.kind, model::OpKind::kReshape) << op.name;
    EXPECT_NE(op.kind, model::OpKind::kInput) << op.name;
    EXPECT_NE(op.kind, model::OpKind::kWeight) << op.name;
    EXPECT_NE(op.kind, model::OpKind::kConstant) << op.name;
  }
  const int non_ops = g.count(model::OpKind::kReshape) + g.count(model::OpKind::kInput) +
                      g.count(model::OpKind::kWeight) + g.count(model::OpKind::kConstant);
  EXPECT_EQ(static_cast<int>(ops.size()), static_cast<int>(g.size()) - non_ops);
}

TEST(Lowering, FusedSoftmaxIsOneOpExplicitIsFive) {
  auto fused = lower(spark(model::LayerType::kSliding, "score-join", model::Precision::kFp16));
  auto expl = lower(spark(model::LayerType::kSliding, "score-join", model::Precision::kFp16, 4096, {"softmax=explicit"}));
  EXPECT_EQ(count_class(fused, OpClass::kSoftmax), 1);
  EXPECT_EQ(count_class(expl, OpClass::kSoftmax), 0);
  EXPECT_EQ(expl.size(), fused.size() - 1 + 5);
}

TEST(Lowering, ClassesOfMatMulsGeluAndBoundary) {
  auto q = lower(spark(model::LayerType::kFull, "ring", model::Precision::kW8A16, 1024));
  EXPECT_EQ(find(q, "attn/qkv_proj").op_class, OpClass::kMatMulWeight);
  EXPECT_EQ(find(q, "mlp/down_proj").op_class, OpClass::kMatMulWeight);
  EXPECT_EQ(find(q, "attn/scores").op_class, OpClass::kMatMulAct);
  EXPECT_EQ(find(q, "attn/context").op_class, OpClass::kMatMulAct);
  EXPECT_EQ(find(q, "attn/k_concat").op_class, OpClass::kDataMovement);
  EXPECT_EQ(find(q, "out/k_out").op_class, OpClass::kOutput);
  EXPECT_EQ(find(q, "in/k_cache/quantize").op_class, OpClass::kConvert);
  EXPECT_EQ(find(q, "mlp/act").op_class, OpClass::kGeluErf);
  // Projections: QKV, head gate, out, MLP gate/up/down.
  EXPECT_EQ(count_class(q, OpClass::kMatMulWeight), 6);
  // Quantized: every boundary tensor converts once (inputs: hidden, k, v, mask, cos, sin;
  // outputs: hidden, k, v).
  EXPECT_EQ(count_class(q, OpClass::kConvert), 6 + 3);
  auto f = lower(spark(model::LayerType::kFull, "ring", model::Precision::kFp16, 1024, {"gelu=tanh"}));
  EXPECT_EQ(count_class(f, OpClass::kConvert), 0);
  EXPECT_EQ(find(f, "mlp/act").op_class, OpClass::kGeluTanh);
}

// projection=conv1x1 (issue 34, unpriced): each 1x1 Conv lowers as the weight MatMul it is
// (until cost model 3 prices the form), with the MatMul's MACs.
TEST(Lowering, A1x1ConvIsAWeightMatMul) {
  auto mm = spark(model::LayerType::kFull, "ring", model::Precision::kW8A16, 1024);
  auto cv = spark(model::LayerType::kFull, "ring", model::Precision::kW8A16, 1024, {"projection=conv1x1"});
  auto q = lower(cv);
  EXPECT_EQ(find(q, "mlp/down_proj").kind, model::OpKind::kConv);
  EXPECT_EQ(find(q, "mlp/down_proj").op_class, OpClass::kMatMulWeight);
  EXPECT_EQ(count_class(q, OpClass::kMatMulWeight), 6);
  EXPECT_EQ(model::matmul_macs(cv, cv.by_name("attn/qkv_proj"), PAD),
            model::matmul_macs(mm, mm.by_name("attn/qkv_proj"), PAD));
  EXPECT_EQ(model::matmul_macs(cv, cv.by_name("attn/qkv_proj")), static_cast<double>(H) * (NH + 2 * KV) * D);
}

TEST(Features, WeightStreamingProjection) {
  for (auto [p, bits] : {std::pair{model::Precision::kFp16, 16}, std::pair{model::Precision::kW8A16, 8},
                         std::pair{model::Precision::kW4A16, 4}}) {
    auto g = spark(model::LayerType::kSliding, "roll", p);
    auto ops = lower(g);
    OpFeatures f = features(g, find(ops, "attn/qkv_proj"), PAD);
    const int64_t n = (NH + 2 * KV) * D;
    EXPECT_EQ(f.count, 1);
    EXPECT_EQ(f.macs, 1.0 * n * H);
    // normed input [1,H] 16-bit + weight [H,n] packed + output [1,n] 16-bit.
    EXPECT_EQ(f.bytes, 2.0 * H + 1.0 * H * n * bits / 8 + 2.0 * n) << model::to_string(p);
    OpFeatures gate = features(g, find(ops, "attn/head_gate_proj"), PAD);
    // Output [1,8] is a 16-bit activation: channels pad to 32.
    EXPECT_EQ(gate.bytes, 2.0 * H + 1.0 * H * NH * bits / 8 + 2.0 * PAD);
    EXPECT_EQ(gate.macs, 1.0 * PAD * H);
  }
}

TEST(Features, NewTokenScorePaysTheChannelPadding) {
  auto g = spark(model::LayerType::kSliding, "score-join", model::Precision::kFp16);
  auto ops = lower(g);
  OpFeatures f = features(g, find(ops, "attn/score_new"), PAD);
  // q [kv,G,D] x k [kv,D,1] -> [kv,G,1], held as [kv,G,32].
  EXPECT_EQ(f.macs, 1.0 * KV * G * PAD * D);
  EXPECT_EQ(f.bytes, 2.0 * KV * G * D + 2.0 * KV * D * PAD + 2.0 * KV * G * PAD);
  OpFeatures unpadded = features(g, find(ops, "attn/score_new"), 1);
  EXPECT_EQ(unpadded.macs, 1.0 * KV * G * D);
}

TEST(Features, CacheDataMovementScalesWithEntries) {
  for (int ctx : {1024, 4096}) {
    auto g = spark(model::LayerType::kFull, "ring", model::Precision::kW8A16, ctx);
    auto ops = lower(g);
    const int64_t n = ctx - 1;
    const auto pad = [](int64_t c) { return (c + PAD - 1) / PAD * PAD; };
    OpFeatures f = features(g, find(ops, "attn/k_concat"), PAD);
    // k_cache [kv,D,n] + k_new [kv,D,1] -> [kv,D,n+1], u16, entries on the channel axis.
    EXPECT_EQ(f.bytes, 2.0 * KV * D * (pad(n) + PAD + pad(n + 1))) << ctx;
    EXPECT_EQ(f.macs, 0);
    OpFeatures s = features(g, find(ops, "attn/scores"), PAD);
    EXPECT_EQ(s.macs, 1.0 * KV * G * pad(n + 1) * D) << ctx;
  }
}

TEST(Features, GeluBytes) {
  auto g = spark(model::LayerType::kSliding, "score-join", model::Precision::kFp16);
  OpFeatures f = features(g, find(lower(g), "mlp/act"), PAD);
  EXPECT_EQ(f.op_class, OpClass::kGeluErf);
  EXPECT_EQ(f.bytes, 2.0 * I + 2.0 * I);  // I = 6656 is a multiple of 32: no padding
}

TEST(Lowering, GlobMatch) {
  EXPECT_TRUE(glob_match("cache/*_window", "cache/k_window"));
  EXPECT_TRUE(glob_match("out/?_out", "out/v_out"));
  EXPECT_FALSE(glob_match("cache/*_window", "cache/k_windows"));
  EXPECT_FALSE(glob_match("attn/k_concat", "attn/v_concat"));
}

}  // namespace
}  // namespace layoutx::costmodel
