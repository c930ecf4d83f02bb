// Formula-shaped tests of the graph builder and analyses on Spark-X2.5-1.7B's layers:
// H=2048, 8 query heads, 2 kv heads (G=4), head dim D=256, window 512 (cache 511).
#include <gtest/gtest.h>

#include "model/analysis.h"
#include "model/builder.h"
#include "model/model_loader.h"
#include "support/error.h"

namespace layoutx::model {
namespace {

constexpr int64_t H = 2048, NH = 8, KV = 2, G = 4, D = 256, I = 6656;

LayerGraph spark(LayerType t, const std::string& layout, Precision p = Precision::kFp16, int ctx = 4096,
                 std::vector<std::string> sets = {}) {
  ModelSpec m = load_model("spark-x2.5-1.7b");
  sets.push_back(std::string("precision=") + to_string(p));
  return build_layer_graph(m.layer(t, ctx), parse_variant(layout, sets));
}

TEST(Builder, SlidingScoreMatMulUnderKeyJoin) {
  auto g = spark(LayerType::kSliding, "roll");
  auto st = analyze(g);
  Vertex s = g.by_name("attn/scores");
  EXPECT_EQ(g.op(s).shape, (Shape{KV, G, 512}));
  EXPECT_EQ(st[s].macs, NH * 512 * D);  // 8 x 512 x 256
  Vertex c = g.by_name("attn/context");
  EXPECT_EQ(st[c].macs, NH * 512 * D);
}

TEST(Builder, RollReturnsTheWindowRingReturnsOneEntry) {
  for (auto p : {Precision::kFp16, Precision::kW8A16, Precision::kW4A16}) {
    auto roll = spark(LayerType::kSliding, "roll", p);
    auto ring = spark(LayerType::kSliding, "ring", p);
    auto kv_out = [](const LayerGraph& g) {
      return numel(g.op(g.find(Role::kKOut)).shape) + numel(g.op(g.find(Role::kVOut)).shape);
    };
    // roll hands back 511 entries x 2 kv heads x 256 dims x (K and V), 16-bit each; ring one entry.
    EXPECT_EQ(kv_out(roll), 511 * KV * D * 2);
    EXPECT_EQ(kv_out(ring), 1 * KV * D * 2);
    auto troll = totals(roll, analyze(roll));
    auto tring = totals(ring, analyze(ring));
    EXPECT_EQ(troll.boundary_bytes_out - tring.boundary_bytes_out, (511 - 1) * KV * D * 2 * 2);
    EXPECT_EQ(troll.boundary_bytes_in, tring.boundary_bytes_in);
    for (const auto* g : {&roll, &ring}) {
      auto t = totals(*g, analyze(*g));
      EXPECT_EQ(weight_and_boundary_bytes(*g), t.weight_bytes + t.boundary_bytes_in + t.boundary_bytes_out);
    }
    EXPECT_EQ(roll.count(OpKind::kSlice), ring.count(OpKind::kSlice) + 2);  // k and v window slices
    EXPECT_NO_THROW(roll.by_name("cache/k_window"));
    EXPECT_THROW(ring.by_name("cache/k_window"), Error);
  }
}

TEST(Builder, ScoreJoinHasNoKeyConcatAndOneMoreScoreMatMul) {
  auto ring = spark(LayerType::kSliding, "ring");
  auto sj = spark(LayerType::kSliding, "score-join");
  EXPECT_NO_THROW(ring.by_name("attn/k_concat"));
  EXPECT_THROW(sj.by_name("attn/k_concat"), Error);
  EXPECT_THROW(sj.by_name("attn/v_concat"), Error);
  // Keys: one score MatMul over N+1 keys. Scores: the cache's and the new token's.
  EXPECT_EQ(sj.count(OpKind::kMatMul), ring.count(OpKind::kMatMul) + 2);  // + new score + new value
  auto sj_bmul = spark(LayerType::kSliding, "score-join", Precision::kFp16, 4096, {"new_value=broadcast_mul"});
  EXPECT_EQ(sj_bmul.count(OpKind::kMatMul), ring.count(OpKind::kMatMul) + 1);
  auto st = analyze(sj);
  EXPECT_EQ(st[sj.by_name("attn/scores_cache")].macs, NH * 511 * D);
  EXPECT_EQ(st[sj.by_name("attn/score_new")].macs, NH * 1 * D);
  EXPECT_EQ(st[sj.by_name("attn/context_new")].macs, NH * 1 * D);
}

TEST(Builder, NewTokenFormsUseTheirOps) {
  auto g = spark(LayerType::kSliding, "score-join", Precision::kFp16, 4096,
                 {"new_score=mul_reducesum", "new_value=broadcast_mul", "softmax=explicit"});
  EXPECT_EQ(g.op(g.by_name("attn/score_new")).kind, OpKind::kReduceSum);
  EXPECT_EQ(g.op(g.by_name("attn/score_new_mul")).kind, OpKind::kMul);
  EXPECT_EQ(g.op(g.by_name("attn/context_new")).kind, OpKind::kMul);
  EXPECT_EQ(g.op(g.by_name("attn/context_new")).shape, (Shape{KV, G, D}));
  EXPECT_EQ(g.count(OpKind::kSoftmax), 0);
  EXPECT_EQ(g.count(OpKind::kReduceMax), 1);
  EXPECT_EQ(g.count(OpKind::kExp), 1);
  EXPECT_EQ(g.count(OpKind::kDiv), 1);
}

TEST(Builder, FullLayerCarriesContextMinusOneEntries) {
  auto g = spark(LayerType::kFull, "ring", Precision::kFp16, 4096);
  EXPECT_EQ(g.layer.cache_entries, 4095);
  EXPECT_EQ(g.op(g.find(Role::kKCache)).shape, (Shape{KV, D, 4095}));
  EXPECT_EQ(g.op(g.find(Role::kVCache)).shape, (Shape{KV, 4095, D}));
  EXPECT_EQ(g.op(g.find(Role::kMask)).shape, (Shape{1, 1, 4096}));
  auto st = analyze(g);
  EXPECT_EQ(st[g.by_name("attn/scores")].macs, NH * 4096 * D);
}

TEST(Builder, HeadGateIsAHiddenByHeadsProjection) {
  auto g = spark(LayerType::kSliding, "roll");
  EXPECT_EQ(g.op(g.find(Role::kHeadGate)).shape, (Shape{H, NH}));  // [2048, 8]
  auto st = analyze(g);
  EXPECT_EQ(st[g.by_name("attn/head_gate_proj")].macs, H * NH);
}

TEST(Builder, RotaryDimsPerLayerType) {
  auto full = spark(LayerType::kFull, "roll", Precision::kFp16, 1024);
  auto sliding = spark(LayerType::kSliding, "roll");
  EXPECT_EQ(full.op(full.find(Role::kRopeCos)).shape, (Shape{1, 1, 64}));
  EXPECT_EQ(sliding.op(sliding.find(Role::kRopeCos)).shape, (Shape{1, 1, 256}));
  // Full layers rotate a 64-dim slice and pass the other 192 dims through.
  EXPECT_EQ(full.op(full.by_name("attn/q_rope/rot_part")).shape, (Shape{KV, G, 64}));
  EXPECT_EQ(full.op(full.by_name("attn/q_rope/pass_part")).shape, (Shape{KV, G, D - 64}));
  EXPECT_THROW(sliding.by_name("attn/q_rope/pass_part"), Error);
  EXPECT_EQ(sliding.op(sliding.by_name("attn/q_rope/mul_cos")).shape, (Shape{KV, G, 256}));
}

TEST(Builder, WeightBytesFollowPrecision) {
  const int64_t params = H * (NH + 2 * KV) * D + H * NH + NH * D * H + 3 * H * I;
  const int64_t norms = 2 * H * 2;  // two RMSNorm weights, 16-bit in every precision
  auto w = [](Precision p) {
    auto g = spark(LayerType::kSliding, "roll", p);
    return totals(g, analyze(g)).weight_bytes;
  };
  EXPECT_EQ(w(Precision::kFp16), params * 2 + norms);
  EXPECT_EQ(w(Precision::kW8A16), params + norms);
  EXPECT_EQ(w(Precision::kW4A16), params / 2 + norms);
}

TEST(Builder, QuantizedGraphsConvertAtTheBoundary) {
  auto fp = spark(LayerType::kSliding, "roll", Precision::kFp16);
  auto q = spark(LayerType::kSliding, "roll", Precision::kW4A16);
  EXPECT_EQ(fp.count(OpKind::kConvert), 0);
  // One conversion per boundary tensor: 6 inputs (hidden, k, v, mask, cos, sin) + 3 outputs.
  EXPECT_EQ(q.count(OpKind::kConvert), 6 + 3);
  EXPECT_EQ(q.op(q.by_name("attn/scores")).dtype, DType::kU16);
  EXPECT_EQ(q.op(q.find(Role::kQkv)).dtype, DType::kI4);
  EXPECT_EQ(q.op(q.find(Role::kKOut)).dtype, DType::kF16);
}

TEST(Builder, MlpAndProjectionMacs) {
  auto g = spark(LayerType::kSliding, "ring");
  auto st = analyze(g);
  EXPECT_EQ(st[g.by_name("attn/qkv_proj")].macs, H * (NH + 2 * KV) * D);
  EXPECT_EQ(st[g.by_name("attn/out_proj")].macs, NH * D * H);
  EXPECT_EQ(st[g.by_name("mlp/gate_proj")].macs, H * I);
  EXPECT_EQ(st[g.by_name("mlp/down_proj")].macs, I * H);
  EXPECT_EQ(g.op(g.by_name("mlp/act")).gelu, GeluForm::kErf);
  auto t = spark(LayerType::kSliding, "ring", Precision::kFp16, 4096, {"gelu=tanh"});
  EXPECT_EQ(t.op(t.by_name("mlp/act")).gelu, GeluForm::kTanh);
}

TEST(Builder, EveryOpFollowsItsOperands) {
  for (auto layout : {"roll", "ring", "score-join"})
    for (auto type : {LayerType::kSliding, LayerType::kFull}) {
      auto g = spark(type, layout, Precision::kW8A16, 2048);
      EXPECT_NO_THROW(g.topological_order());
    }
}

}  // namespace
}  // namespace layoutx::model
