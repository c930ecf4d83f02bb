// Emitted models run in ONNX Runtime (CPU, onnxruntime-node via scripts/ort/run.js) and match
// layoutx's reference executor (float32) over a multi-step history in which the harness plays
// the runtime's part for the cache. Skipped (not failed) only where Node.js or the
// onnxruntime-node package is absent.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "db/profile.h"
#include "emit/onnx_writer.h"
#include "emit/ort_runner.h"
#include "emit/validate.h"
#include "model/builder.h"
#include "model/numerics/weights.h"
#include "support/error.h"
#include "tests/emit/small_layers.h"
#include "tests/temp_dir.h"

namespace layoutx::emit {
namespace {

using model::LayerType;
namespace fs = std::filesystem;

#define SKIP_WITHOUT_ORT()                                                          \
  do {                                                                              \
    if (auto why = ort_unavailable_reason()) GTEST_SKIP() << "ONNX Runtime tests skipped: " << *why; \
  } while (0)

std::string scratch(const std::string& name) {
  static const layoutx::test::TempDir root("emit-test");  // removed at exit
  auto d = root.path() / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

TEST(Ort, MeasureWritesOutputsTimingsAndProfile) {
  SKIP_WITHOUT_ORT();
  const auto L = testing::small_layer(LayerType::kSliding);
  auto g = model::build_layer_graph(L, model::preset("ring"));
  auto w = model::numerics::seeded_weights(L, 11);
  const std::string dir = scratch("measure");
  const std::string path = dir + "/ring.onnx";
  write_onnx(to_onnx(g, LayerWeightsSource(w)), path);
  TensorMap in;
  in["hidden_in"] = {{1, 64}, std::vector<float>(64, 0.5f)};
  in["k_cache"] = {{2, 16, 7}, std::vector<float>(2 * 16 * 7, 0.1f)};
  in["v_cache"] = {{2, 7, 16}, std::vector<float>(2 * 7 * 16, -0.2f)};
  in["mask"] = {{1, 1, 8}, std::vector<float>(8, 0.0f)};
  in["rope_cos"] = {{1, 1, 16}, std::vector<float>(16, 1.0f)};
  in["rope_sin"] = {{1, 1, 16}, std::vector<float>(16, 0.0f)};
  auto r = ort_measure(path, in, dir + "/run", {.runs = 4, .warmup = 2, .threads = 1, .profile = true});
  EXPECT_EQ(r.runs_ms.size(), 4u);
  EXPECT_EQ(r.warmup_ms.size(), 2u);
  for (double ms : r.runs_ms) EXPECT_GT(ms, 0.0);
  ASSERT_EQ(r.outputs.count("hidden_out"), 1u);
  EXPECT_EQ(r.outputs.at("hidden_out").shape, (model::Shape{1, 64}));
  EXPECT_EQ(r.outputs.at("k_out").shape, (model::Shape{2, 16, 1}));
  ASSERT_FALSE(r.profile_path.empty());
  std::ifstream f(r.profile_path);
  std::string profile((std::istreambuf_iterator<char>(f)), {});
  // ORT's profile names each node's kernel by the layoutx op name.
  EXPECT_NE(profile.find("attn/scores"), std::string::npos);
  EXPECT_NE(profile.find("model_run"), std::string::npos);
  // The profile keeps the timed runs only (warm-up dropped): the ingester sees 4 runs.
  auto prof = db::parse_ort_json(profile, r.profile_path);
  ASSERT_EQ(prof.layers.size(), 1u);
  EXPECT_EQ(prof.layers[0].samples, 4);
  EXPECT_GT(prof.layers[0].ms, 0.0);
}

TEST(Ort, ABadInputIsReportedWithTheHarnessMessage) {
  SKIP_WITHOUT_ORT();
  const auto L = testing::small_layer(LayerType::kFull);
  auto g = model::build_layer_graph(L, model::preset("ring"));
  const std::string dir = scratch("bad");
  write_onnx(to_onnx(g, LayerWeightsSource(model::numerics::seeded_weights(L, 1))), dir + "/m.onnx");
  TensorMap in;
  in["hidden_in"] = {{1, 63}, std::vector<float>(63, 0.0f)};  // wrong hidden size
  try {
    ort_measure(dir + "/m.onnx", in, dir + "/run", {.runs = 1, .warmup = 0, .threads = 1, .profile = false});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ONNX Runtime run of"), std::string::npos) << e.what();
  }
}

struct Case {
  LayerType type;
  std::string layout;
  std::vector<std::string> sets;
  model::Family family = model::Family::kSpark;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << model::to_string(c.family) << " " << model::to_string(c.type) << " " << c.layout;
  for (const auto& x : c.sets) *os << " " << x;
}

class OrtMatchesExecutor : public ::testing::TestWithParam<Case> {};

// A u8 cache emitted as QuantizeLinear -> DequantizeLinear with its calibrated tied scale: ORT
// matches the executor simulating the same encodings (roll re-encodes the window each step;
// ring and score-join the new entry once); the same graph without ranges has Casts only.
TEST(OrtQdq, AU8CacheInQdqFormMatchesTheExecutorsEncoding) {
  SKIP_WITHOUT_ORT();
  for (auto t : {LayerType::kSliding, LayerType::kFull})
    for (const char* layout : {"roll", "ring", "score-join"})
      for (const char* precision : {"fp16", "w8a16"}) {
        SCOPED_TRACE(std::string(model::to_string(t)) + " " + layout + " " + precision);
        const auto L = testing::small_layer(t);
        auto g = model::build_layer_graph(L, model::parse_variant(layout, {"kv_dtype=u8", std::string("precision=") + precision}));
        const int steps = t == LayerType::kSliding ? 2 * L.cache_entries + 3 : L.cache_entries + 1;
        const auto w = model::numerics::seeded_weights(L, 21);
        const std::string dir = scratch("qdq");
        auto q = validate_in_ort(g, w, steps, 5, dir, true);
        int pairs = 0;
        const onnx::ModelProto emitted = read_onnx(dir + "/model.onnx");
        for (const auto& n : emitted.graph().node()) pairs += n.op_type() == "QuantizeLinear";
        EXPECT_EQ(pairs, 2);  // K and V: the one place each enters the cache's encoding
        std::printf("[figure] ORT vs executor, u8 QDQ cache, %s %s %s: hidden %.1f dB, kv %.1f dB\n",
                    model::to_string(t), layout, precision, q.hidden.snr_db, q.kv_snr_db);
        EXPECT_GT(q.hidden.snr_db, 100.0);
        EXPECT_GT(q.kv_snr_db, 100.0);
        auto m = to_onnx(g, LayerWeightsSource(w));
        int qdq = 0;
        for (const auto& n : m.graph().node()) qdq += n.op_type() == "QuantizeLinear";
        EXPECT_EQ(qdq, 0);  // without ranges: Casts
      }
}

TEST_P(OrtMatchesExecutor, OverAHistoryWhereTheRingWraps) {
  SKIP_WITHOUT_ORT();
  const Case& c = GetParam();
  const auto L = testing::small_family_layer(c.family, c.type);
  auto g = model::build_layer_graph(L, model::parse_variant(c.layout, c.sets));
  // Sliding: 2N+3 steps, so ring slots are overwritten twice; full: N+1 steps fill the cache.
  const int steps = c.type == LayerType::kSliding ? 2 * L.cache_entries + 3 : L.cache_entries + 1;
  auto v = validate_in_ort(g, model::numerics::seeded_weights(L, 21), steps, 5, scratch("validate"));
  EXPECT_EQ(v.steps, steps);
  // float32 against float32 with a different op order: rounding-level differences only.
  EXPECT_GT(v.hidden.snr_db, 110.0) << g.variant.key();
  EXPECT_GT(v.hidden.delta_snr_db, 100.0) << g.variant.key();
  EXPECT_GT(v.kv_snr_db, 110.0) << g.variant.key();
  EXPECT_EQ(v.hidden.top1_agreement, 1.0);
  std::printf("[figure] ORT vs executor %s %s %s: hidden %.1f dB, kv %.1f dB\n", model::to_string(c.family),
              model::to_string(c.type), g.variant.key().c_str(), v.hidden.snr_db, v.kv_snr_db);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (auto t : {LayerType::kSliding, LayerType::kFull}) {
    out.push_back({t, "roll", {}});
    out.push_back({t, "ring", {}});
    out.push_back({t, "score-join", {}});
    out.push_back({t, "score-join", {"softmax=explicit", "new_score=mul_reducesum", "new_value=broadcast_mul"}});
    out.push_back({t, "ring", {"gelu=tanh", "precision=w4a16"}});
  }
  // Each other family's layer: every attention form, and a quantized ring, in its own activation
  // (the gelu axis only for GELU models).
  using model::Family;
  for (Family f : {Family::kLlama, Family::kQwen2, Family::kQwen3, Family::kMistral, Family::kGemma2, Family::kGemma3,
                   Family::kCohere2})
    for (auto t : {LayerType::kSliding, LayerType::kFull}) {
      const bool tanh = testing::small_family_layer(f, t).activation == model::Activation::kGeluTanh;
      auto own = [&](std::vector<std::string> sets) {
        if (tanh) sets.push_back("gelu=tanh");
        return sets;
      };
      out.push_back({t, "roll", own({}), f});
      out.push_back({t, "ring", own({}), f});
      out.push_back({t, "score-join", own({}), f});
      out.push_back({t, "score-join", own({"softmax=explicit", "new_score=mul_reducesum", "new_value=broadcast_mul"}), f});
      out.push_back({t, "ring", own({"precision=w8a16"}), f});
      out.push_back({t, "ring", own({"precision=w4a16"}), f});
    }
  // The exporters' forms (issue 34): K as rows (a Transpose before the scores MatMul), u8/u16
  // caches (Casts in the float graph) and block weights, on Spark's small layer.
  for (auto t : {LayerType::kSliding, LayerType::kFull}) {
    out.push_back({t, "roll", {"k_layout=rows"}});
    out.push_back({t, "ring", {"k_layout=rows"}});
    out.push_back({t, "score-join", {"k_layout=rows", "new_score=mul_reducesum"}});
    out.push_back({t, "ring", {"kv_dtype=u8", "precision=w4a16", "weight_quant=block32"}});
    out.push_back({t, "roll", {"kv_dtype=u16", "precision=w8a16"}});
    out.push_back({t, "score-join", {"kv_dtype=u8", "k_layout=rows"}});
    out.push_back({t, "ring", {"softmax=masked"}});
    out.push_back({t, "ring", {"sliding_cache=context"}});
    out.push_back({t, "roll", {"sliding_cache=context", "kv_dtype=u8"}});
    out.push_back({t, "score-join", {"softmax=masked", "precision=w4a16", "weight_quant=block16"}});
    // heads=per_head (Slices of the caches and weights, one chain per head, Concats back) and
    // projection=conv1x1 (Conv with kernel_shape 1x1 on Reshapes to [1, C, 1, 1]).
    out.push_back({t, "roll", {"heads=per_head"}});
    out.push_back({t, "ring", {"heads=per_head"}});
    out.push_back({t, "score-join", {"heads=per_head", "new_score=mul_reducesum", "new_value=broadcast_mul"}});
    out.push_back({t, "ring", {"heads=per_head", "kv_dtype=u8", "k_layout=rows", "softmax=masked"}});
    out.push_back({t, "roll", {"projection=conv1x1"}});
    out.push_back({t, "ring", {"projection=conv1x1", "precision=w4a16", "weight_quant=block32"}});
    out.push_back({t, "ring", {"heads=per_head", "projection=conv1x1", "precision=w8a16"}});
  }
  // The two forms over other structures: biases (Qwen2), q/k norms and softcap (Gemma 2).
  for (model::Family f : {model::Family::kQwen2, model::Family::kGemma2})
    for (auto t : {LayerType::kSliding, LayerType::kFull}) {
      const auto L = testing::small_family_layer(f, t);
      std::vector<std::string> sets = {"heads=per_head", "projection=conv1x1"};
      if (L.activation == model::Activation::kGeluTanh) sets.push_back("gelu=tanh");
      out.push_back({t, "ring", sets, f});
    }
  return out;
}

INSTANTIATE_TEST_SUITE_P(SmallModel, OrtMatchesExecutor, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           std::string s = std::string(model::to_string(i.param.type)) + "_" + i.param.layout;
                           if (i.param.family != model::Family::kSpark) s = model::to_string(i.param.family) + ("_" + s);
                           for (const auto& x : i.param.sets) s += "_" + x;
                           for (auto& ch : s)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return s;
                         });

}  // namespace
}  // namespace layoutx::emit
