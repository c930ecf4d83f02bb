// The exporters' forms (issue 34) in the graph builder and analyses, on Spark-X2.5-1.7B's layers
// (H=2048, 8 query heads, 2 kv heads, head dim 256, window 512: cache 511), and their conversion
// records (configs/rules/exporter-forms.yaml).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <set>

#include "model/analysis.h"
#include "model/builder.h"
#include "model/design_space.h"
#include "model/model_loader.h"
#include "support/error.h"

namespace layoutx::model {
namespace {

constexpr int64_t H = 2048, KV = 2, G = 4, D = 256, N = 511, I = 6656;

LayerGraph spark(const std::string& layout, Precision p, std::vector<std::string> sets = {},
                 LayerType t = LayerType::kSliding) {
  ModelSpec m = load_model("spark-x2.5-1.7b");
  sets.push_back(std::string("precision=") + to_string(p));
  return build_layer_graph(m.layer(t, 4096), parse_variant(layout, sets));
}

const OpNode& io(const LayerGraph& g, Role r) { return g.op(g.find(r)); }

// Today's K is stored transposed: k_layout's default is that form, and the graph is the same
// op for op as one built without the axis set.
TEST(ExporterForms, TodaysKIsTransposedAndTheDefaultsBuildTodaysGraph) {
  for (const char* layout : {"roll", "ring", "score-join"})
    for (auto p : {Precision::kFp16, Precision::kW4A16}) {
      auto today = spark(layout, p);
      auto spelled = spark(layout, p, {"k_layout=transposed", "kv_dtype=f16"});
      EXPECT_EQ(io(today, Role::kKCache).shape, (Shape{KV, D, N}));
      ASSERT_EQ(today.size(), spelled.size());
      for (Vertex v = 0; v < today.size(); ++v) {
        EXPECT_EQ(today.op(v).name, spelled.op(v).name);
        EXPECT_EQ(today.op(v).shape, spelled.op(v).shape);
        EXPECT_EQ(today.op(v).dtype, spelled.op(v).dtype);
      }
    }
}

// k_layout=rows: K [kv, N, D] like V; the scores MatMuls read it transposed; the new key joins
// along the slot axis and is returned as a row [kv, 1, D]; no [kv,D,1] reshape.
TEST(ExporterForms, RowsKeepKLikeVAndTransposeInTheScores) {
  for (const char* layout : {"roll", "ring", "score-join"}) {
    SCOPED_TRACE(layout);
    auto g = spark(layout, Precision::kFp16, {"k_layout=rows"});
    EXPECT_EQ(io(g, Role::kKCache).shape, (Shape{KV, N, D}));
    EXPECT_THROW(g.by_name("attn/k_new_t"), Error);
    const bool window = std::string(layout) == "roll";
    EXPECT_EQ(io(g, Role::kKOut).shape, window ? (Shape{KV, N, D}) : (Shape{KV, 1, D}));
    int transposed = 0;
    for (Vertex v : g.of_kind(OpKind::kMatMul)) transposed += g.op(v).transpose_b;
    EXPECT_EQ(transposed, std::string(layout) == "score-join" ? 2 : 1);
    const Vertex s = g.by_name(std::string(layout) == "score-join" ? "attn/scores_cache" : "attn/scores");
    EXPECT_TRUE(g.op(s).transpose_b);
    EXPECT_EQ(g.op(s).shape.back(), std::string(layout) == "score-join" ? N : N + 1);
    // Same MACs as the transposed form: the transpose is in how the MatMul reads K.
    auto t = spark(layout, Precision::kFp16);
    EXPECT_EQ(totals(g, analyze(g)).macs, totals(t, analyze(t)).macs);
  }
}

// kv_dtype=u8 in a quantized graph: the caches cross the boundary as u8 (half the f16 bytes),
// no conversion of the cache inside the graph, the new entry quantized once to the cache's
// encoding (tied) and returned as those codes.
TEST(ExporterForms, U8CachesCrossTheBoundaryAsCodes) {
  auto f16 = spark("ring", Precision::kW4A16);
  auto u8 = spark("ring", Precision::kW4A16, {"kv_dtype=u8"});
  for (Role r : {Role::kKCache, Role::kVCache, Role::kKOut, Role::kVOut}) EXPECT_EQ(io(u8, r).dtype, DType::kU8);
  EXPECT_NO_THROW(f16.by_name("in/k_cache/quantize"));
  EXPECT_THROW(u8.by_name("in/k_cache/quantize"), Error);
  EXPECT_THROW(u8.by_name("in/k_cache/dequantize"), Error);
  EXPECT_THROW(u8.by_name("out/k_out/dequantize"), Error);
  const Vertex tied = u8.by_name("attn/k_new/to_cache");
  EXPECT_EQ(u8.op(tied).kind, OpKind::kConvert);
  EXPECT_EQ(u8.op(tied).dtype, DType::kU8);
  EXPECT_EQ(u8.operands(u8.find(Role::kKOut))[0], tied);  // the returned entry is the tied codes
  EXPECT_EQ(u8.op(u8.by_name("attn/k_concat")).dtype, DType::kU8);
  // The scores MatMul reads 16-bit queries x the 8-bit cache.
  const Vertex s = u8.by_name("attn/scores");
  EXPECT_EQ(u8.op(u8.operands(s)[1]).dtype, DType::kU8);
  EXPECT_EQ(u8.op(s).dtype, DType::kU16);
  auto tf = totals(f16, analyze(f16));
  auto tu = totals(u8, analyze(u8));
  EXPECT_EQ(tf.boundary_bytes_in - tu.boundary_bytes_in, 2 * KV * N * D);  // K and V, 1 byte less each
  EXPECT_EQ(tf.boundary_bytes_out - tu.boundary_bytes_out, 2 * KV * D);
  // u16: 16-bit fixed point at the boundary, the same bytes as f16, no conversion inside.
  auto u16 = spark("roll", Precision::kW8A16, {"kv_dtype=u16"});
  for (Role r : {Role::kKCache, Role::kVCache, Role::kKOut, Role::kVOut}) EXPECT_EQ(io(u16, r).dtype, DType::kU16);
  EXPECT_THROW(u16.by_name("in/k_cache/quantize"), Error);
  EXPECT_THROW(u16.by_name("out/k_out/dequantize"), Error);
  auto f16roll = spark("roll", Precision::kW8A16);
  EXPECT_EQ(totals(u16, analyze(u16)).boundary_bytes_in, totals(f16roll, analyze(f16roll)).boundary_bytes_in);
  EXPECT_LT(u16.size(), f16roll.size());  // the cache conversions are gone
  // An fp16 graph with a u8 cache converts at the boundary instead.
  auto fp = spark("roll", Precision::kFp16, {"kv_dtype=u8"});
  EXPECT_EQ(fp.op(fp.by_name("in/k_cache/dequantize")).dtype, DType::kF16);
  EXPECT_EQ(fp.op(fp.by_name("out/k_out/quantize")).dtype, DType::kU8);
}

// weight_quant=blockN: the i4 projection weights carry their block; bytes = 4 bits per weight
// plus one 4-bit integer scale per block and output channel.
TEST(ExporterForms, BlockWeightsAddTheirBlockScales) {
  auto pc = spark("ring", Precision::kW4A16);
  const int64_t pc_bytes = totals(pc, analyze(pc)).weight_bytes;
  for (int block : {16, 32, 64}) {
    auto g = spark("ring", Precision::kW4A16, {"weight_quant=block" + std::to_string(block)});
    const OpNode& down = io(g, Role::kMlpDown);
    EXPECT_EQ(down.block, block);
    EXPECT_EQ(down.dtype, DType::kI4);
    EXPECT_EQ(node_bytes(down), I * H / 2 + (I / block) * H / 2);
    EXPECT_EQ(io(g, Role::kInputNorm).block, 0);  // norms are not block-quantized
    int64_t scales = 0;
    for (Vertex v : g.of_kind(OpKind::kWeight)) {
      if (g.op(v).dtype == DType::kI4) scales += (g.op(v).shape[0] + block - 1) / block * g.op(v).shape[1] * 4;
    }
    EXPECT_EQ(totals(g, analyze(g)).weight_bytes - pc_bytes, scales / 8) << block;
  }
  EXPECT_EQ(io(pc, Role::kMlpDown).block, 0);
}

// softmax=masked: one Softmax op over the scores and the mask (QNN's MaskedSoftmax), no add.
TEST(ExporterForms, MaskedSoftmaxFoldsTheMaskAdd) {
  for (const char* layout : {"ring", "score-join"}) {
    auto fused = spark(layout, Precision::kW4A16);
    auto masked = spark(layout, Precision::kW4A16, {"softmax=masked"});
    EXPECT_NO_THROW(fused.by_name("attn/mask_add"));
    EXPECT_THROW(masked.by_name("attn/mask_add"), Error);
    const Vertex s = masked.by_name("attn/softmax");
    ASSERT_EQ(masked.operands(s).size(), 2u);
    EXPECT_EQ(masked.op(masked.operands(s)[1]).name, "in/mask/quantize");
    EXPECT_EQ(masked.op(s).shape, fused.op(fused.by_name("attn/softmax")).shape);
    EXPECT_EQ(masked.size() + 1, fused.size());
  }
}

// sliding_cache=context: a sliding layer's cache is context-1 slots like a full layer's (the
// window is the runtime's mask); a full layer is unchanged.
TEST(ExporterForms, ContextLengthSlidingCacheHasTheFullLayersSlots) {
  auto s = spark("ring", Precision::kW4A16, {"sliding_cache=context"});
  EXPECT_EQ(s.layer.cache_entries, 4095);
  EXPECT_EQ(io(s, Role::kKCache).shape, (Shape{KV, D, 4095}));
  EXPECT_EQ(io(s, Role::kMask).shape, (Shape{1, 1, 4096}));
  auto f = spark("ring", Precision::kW4A16, {"sliding_cache=context"}, LayerType::kFull);
  auto f0 = spark("ring", Precision::kW4A16, {}, LayerType::kFull);
  EXPECT_EQ(io(f, Role::kKCache).shape, io(f0, Role::kKCache).shape);
  auto w = spark("ring", Precision::kW4A16);
  EXPECT_EQ(totals(s, analyze(s)).boundary_bytes_in - totals(w, analyze(w)).boundary_bytes_in,
            2 * KV * D * (4095 - N) * 2 + (4095 - N) * 2);  // K and V f16, and the longer mask
}

// heads=per_head on Spark's sliding layer at ctx 4096 (8 query heads over 2 KV heads): one
// scores MatMul, softmax and weighted-values MatMul per query head, one key/value projection per
// KV head; the same boundary I/O as grouped (the caches one tensor per layer, each KV head's
// part a Slice), the same MACs (the projections' rows are split, not repeated), many more ops.
TEST(ExporterForms, PerHeadBuildsOneChainPerQueryHead) {
  for (const char* layout : {"roll", "ring", "score-join"}) {
    SCOPED_TRACE(layout);
    auto grouped = spark(layout, Precision::kW4A16);
    auto per_head = spark(layout, Precision::kW4A16, {"heads=per_head"});
    const int nh = KV * G;
    EXPECT_EQ(per_head.count(OpKind::kSoftmax), nh);
    EXPECT_EQ(grouped.count(OpKind::kSoftmax), 1);
    for (int i = 0; i < nh; ++i) {
      const std::string p = "attn/h" + std::to_string(i) + "/";
      const Vertex q = per_head.by_name(p + "q_proj");
      EXPECT_EQ(per_head.op(q).shape, (Shape{1, D}));
      EXPECT_EQ(per_head.op(per_head.by_name(p + "softmax")).shape, (Shape{1, 1, N + 1}));
      // Query head i reads KV head i / G's cache slice.
      const std::string kvp = "attn/kv" + std::to_string(i / G) + "/";
      const Vertex s = per_head.by_name(std::string(layout) == "score-join" ? p + "scores_cache" : p + "scores");
      const Vertex k = per_head.operands(s)[1];
      EXPECT_EQ(per_head.op(k).name, std::string(layout) == "score-join" ? kvp + "k_cache" : kvp + "k_concat");
    }
    EXPECT_THROW(per_head.by_name("attn/h8/q_proj"), Error);
    for (int j = 0; j < KV; ++j) EXPECT_NO_THROW(per_head.by_name("attn/kv" + std::to_string(j) + "/k_proj"));
    for (Role r : {Role::kKCache, Role::kVCache, Role::kMask, Role::kKOut, Role::kVOut, Role::kHiddenOut}) {
      EXPECT_EQ(io(per_head, r).shape, io(grouped, r).shape) << role_name(r);
      EXPECT_EQ(io(per_head, r).dtype, io(grouped, r).dtype) << role_name(r);
    }
    const auto tg = totals(grouped, analyze(grouped)), tp = totals(per_head, analyze(per_head));
    EXPECT_EQ(tp.macs, tg.macs);
    EXPECT_EQ(tp.weight_bytes, tg.weight_bytes);  // one weight per role, sliced
    EXPECT_EQ(per_head.count(OpKind::kWeight), grouped.count(OpKind::kWeight));
    EXPECT_GT(tp.op_count, 3 * tg.op_count);
    std::printf("[figure] spark sliding ctx 4096 %s w4a16: ops grouped %lld, per_head %lld\n", layout,
                static_cast<long long>(tg.op_count), static_cast<long long>(tp.op_count));
  }
  // Gemma 3's structure too: separate q/k/v projections, q/k norms, one KV head.
  const ModelSpec m = load_model("gemma-3-1b");
  for (LayerType t : {LayerType::kSliding, LayerType::kFull}) {
    const LayerSpec L = m.layer(t, 1024);
    auto g = build_layer_graph(L, parse_variant("ring", {"heads=per_head"}));
    EXPECT_EQ(g.count(OpKind::kSoftmax), L.heads);
    const auto gg = build_layer_graph(L, parse_variant("ring"));
    EXPECT_EQ(totals(g, analyze(g)).macs, totals(gg, analyze(gg)).macs);
  }
}

// projection=conv1x1: every projection is a 1x1 Conv on a [1, C, 1, 1] view with its weight
// [out, in, 1, 1]; no weight MatMul is left; the same MACs and weight bytes (block scales
// included) as the MatMul form.
TEST(ExporterForms, Conv1x1WritesEachProjectionAsAConv) {
  for (const char* wq : {"per_channel", "block32"}) {
    SCOPED_TRACE(wq);
    auto mm = spark("ring", Precision::kW4A16, {std::string("weight_quant=") + wq});
    auto conv = spark("ring", Precision::kW4A16, {"projection=conv1x1", std::string("weight_quant=") + wq});
    // Spark: qkv, head gate, out, gate, up, down.
    EXPECT_EQ(conv.count(OpKind::kConv), 6);
    for (Vertex v : conv.of_kind(OpKind::kMatMul))
      for (Vertex u : conv.operands(v)) EXPECT_NE(conv.op(u).kind, OpKind::kWeight) << conv.op(v).name;
    const OpNode& down = io(conv, Role::kMlpDown);
    EXPECT_EQ(down.shape, (Shape{H, I, 1, 1}));
    EXPECT_TRUE(down.conv_layout);
    const Vertex c = conv.by_name("mlp/down_proj");
    EXPECT_EQ(conv.op(c).kind, OpKind::kConv);
    EXPECT_EQ(conv.op(c).shape, (Shape{1, H, 1, 1}));
    EXPECT_EQ(conv.op(conv.operands(c)[0]).shape, (Shape{1, I, 1, 1}));
    const auto tm = totals(mm, analyze(mm)), tc = totals(conv, analyze(conv));
    EXPECT_EQ(tc.macs, tm.macs);
    EXPECT_EQ(tc.weight_bytes, tm.weight_bytes);
    EXPECT_EQ(matmul_macs(conv, c, 32), matmul_macs(mm, mm.by_name("mlp/down_proj"), 32));
    EXPECT_EQ(conv.op(conv.by_name("out/hidden_out")).shape, (Shape{1, H}));
  }
  // With per_head, each head's projection is a Conv over its slice of the weight's output rows.
  auto both = spark("ring", Precision::kW8A16, {"projection=conv1x1", "heads=per_head"});
  const Vertex q0 = both.by_name("attn/h0/q_proj");
  EXPECT_EQ(both.op(q0).kind, OpKind::kConv);
  const OpNode& w = both.op(both.operands(q0)[1]);
  EXPECT_EQ(w.kind, OpKind::kSlice);
  EXPECT_EQ(w.axis, 0);
  EXPECT_EQ(w.shape, (Shape{D, H, 1, 1}));
}

// Every value of every unpriced axis has conversion records at every precision it applies to,
// each with a result, and a source unless nothing was tried.
TEST(ExporterForms, EveryExporterFormHasItsConversionRecords) {
  const YAML::Node doc = YAML::LoadFile(std::string(LAYOUTX_TEST_DIR) + "/../configs/rules/exporter-forms.yaml");
  const DesignSpace& d = design_space();
  const std::set<std::string> results = {"ok", "fail", "requires", "unknown"};
  int records = 0;
  for (size_t ai = 0; ai < d.axes().size(); ++ai) {
    const Axis& a = d.axes()[ai];
    if (!doc["axes"][a.name]) continue;  // not an exporter form (the team's own axes: qnn-htp.yaml)
    for (size_t i = 1; i < a.values.size(); ++i) {
      if (a.name == "softmax" && a.values[i] != "masked") continue;
      SCOPED_TRACE(a.name + "=" + a.values[i]);
      const YAML::Node recs = doc["axes"][a.name][a.values[i]];
      ASSERT_TRUE(recs.IsSequence());
      std::set<std::string> precisions;
      for (const auto& r : recs) {
        const std::string result = r["result"].as<std::string>();
        EXPECT_TRUE(results.count(result)) << result;
        if (result != "unknown") {
          EXPECT_FALSE(r["source"].as<std::string>("").empty());
        }
        EXPECT_FALSE(r["evidence"].as<std::string>("").empty());
        Variant v;
        EXPECT_NO_THROW(v.set("precision", r["precision"].as<std::string>()));
        precisions.insert(r["precision"].as<std::string>());
        ++records;
      }
      for (const std::string& p : d.axis("precision").values) {
        Variant v = parse_variant("ring", {"precision=" + p});
        v.set(a.name, a.values[i]);
        bool applies = true;
        try {
          v.validate();
        } catch (const Error&) {
          applies = false;
        }
        EXPECT_EQ(precisions.count(p), applies ? 1u : 0u) << p;
      }
    }
  }
  EXPECT_GE(records, 21);
  for (const char* need : {"HTP v69+", "HTP v73+", "QNN 2.35+"}) {
    bool found = false;
    for (const auto& r : doc["requirements"]) found = found || r["needs"].as<std::string>() == need;
    EXPECT_TRUE(found) << need;
  }
}

}  // namespace
}  // namespace layoutx::model
