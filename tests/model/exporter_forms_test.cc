// The exporters' forms (issue 34) in the graph builder and analyses, on Spark-X2.5-1.7B's layers
// (H=2048, 8 query heads, 2 kv heads, head dim 256, window 512: cache 511), and their conversion
// records (configs/rules/exporter-forms.yaml).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

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

// Every value of every unpriced axis has conversion records at every precision it applies to,
// each with a result, and a source unless nothing was tried.
TEST(ExporterForms, EveryUnpricedValueHasItsConversionRecords) {
  const YAML::Node doc = YAML::LoadFile(std::string(LAYOUTX_TEST_DIR) + "/../configs/rules/exporter-forms.yaml");
  const DesignSpace& d = design_space();
  const std::set<std::string> results = {"ok", "fail", "requires", "unknown"};
  int records = 0;
  for (size_t ai = 0; ai < d.axes().size(); ++ai) {
    const Axis& a = d.axes()[ai];
    for (size_t i = 1; i < a.values.size(); ++i) {
      if (d.priced_value(ai, i)) continue;
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
  EXPECT_GE(records, 14);
  for (const char* need : {"HTP v69+", "HTP v73+", "QNN 2.35+"}) {
    bool found = false;
    for (const auto& r : doc["requirements"]) found = found || r["needs"].as<std::string>() == need;
    EXPECT_TRUE(found) << need;
  }
}

}  // namespace
}  // namespace layoutx::model
