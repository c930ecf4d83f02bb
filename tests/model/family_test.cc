// Each family's layer as built from its HF config fixture (tests/fixtures/hf/): the ops that
// make the family different, the whole model's parameter count against the published one, and
// the config keys that are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "model/builder.h"
#include "model/model_loader.h"
#include "model/param_count.h"
#include "support/error.h"
#include "tests/error_message.h"

namespace layoutx::model {
namespace {

const std::string kHf = std::string(LAYOUTX_TEST_DIR) + "/fixtures/hf/";
ModelSpec hf(const std::string& file) { return import_hf_config(kHf + file); }

// The layer graph of a model's full layer (its sliding one when it has none), roll, fp16.
LayerGraph layer_of(const ModelSpec& m, const std::string& preset = "roll") {
  const LayerType t = m.count(LayerType::kFull) ? LayerType::kFull : LayerType::kSliding;
  return build_layer_graph(m.layer(t, std::max(4096, m.sliding_window.value_or(0))), parse_variant(preset, {}));
}
int norms(const LayerGraph& g) { return g.count(OpKind::kRmsNorm) + g.count(OpKind::kLayerNorm); }
// The operand of v in slot i.
const OpNode& operand(const LayerGraph& g, const std::string& name, int i) {
  return g.op(g.operands(g.by_name(name))[i]);
}

TEST(Family, Gemma3HasSixOnePlusRmsNormsPerLayerAndTanhGelu) {
  const ModelSpec m = hf("gemma3-1b.json");
  EXPECT_EQ(m.family, Family::kGemma3);
  const LayerGraph g = layer_of(m);
  EXPECT_EQ(g.count(OpKind::kRmsNorm), 6);  // input, q, k, attention output, pre- and post-feed-forward
  for (Vertex v : g.of_kind(OpKind::kRmsNorm)) EXPECT_EQ(g.op(v).norm_offset, 1.0) << g.op(v).name;
  EXPECT_EQ(operand(g, "attn/q_norm", 1).shape, (Shape{256}));  // per head, over head_dim
  EXPECT_EQ(g.count(OpKind::kSigmoid), 0);                     // no head gate
  EXPECT_EQ(g.count(OpKind::kGelu), 1);
  // The residual adds take the normed block outputs.
  EXPECT_EQ(operand(g, "attn/residual", 1).name, "attn/output_norm");
  EXPECT_EQ(operand(g, "mlp/residual", 1).name, "mlp/output_norm");
  EXPECT_DOUBLE_EQ(operand(g, "attn/q_scale", 1).scalar, 1.0 / std::sqrt(256.0));  // query_pre_attn_scalar
  EXPECT_DOUBLE_EQ(m.embedding_scale, std::sqrt(1152.0));
  EXPECT_TRUE(m.tied_embeddings);
}

TEST(Family, Gemma3From4BConfigScalesTheGlobalRopeOnly) {
  const ModelSpec m = hf("gemma3-4b.json");  // multimodal config: the text_config is read
  EXPECT_EQ(m.rope_full.scaling, RopeScaling::kLinear);
  EXPECT_EQ(m.rope_full.factor, 8.0);
  EXPECT_EQ(m.rope_sliding.scaling, RopeScaling::kNone);
  EXPECT_EQ(m.sliding_window, 1024);
  EXPECT_DOUBLE_EQ(rope_inv_freq(m.rope_full, 3), std::pow(1e6, -6.0 / 256) / 8.0);
}

TEST(Family, LlamaHasSiluAndNoGeluAndSeparateProjections) {
  for (const char* f : {"llama3.2-1b.json", "llama3.2-3b.json"}) {
    const ModelSpec m = hf(f);
    const LayerGraph g = layer_of(m);
    EXPECT_EQ(g.count(OpKind::kGelu), 0) << f;
    EXPECT_EQ(g.count(OpKind::kSigmoid), 1) << f;  // SiLU's, no head gate
    EXPECT_EQ(g.op(g.by_name("mlp/act")).kind, OpKind::kMul);
    EXPECT_EQ(norms(g), 2) << f;
    EXPECT_TRUE(g.has(Role::kQProj) && g.has(Role::kKProj) && g.has(Role::kVProj)) << f;
    EXPECT_FALSE(g.has(Role::kQkv)) << f;
    EXPECT_EQ(m.rope_full.rotary_dims, m.head_dim) << f;
  }
}

TEST(Family, Qwen2HasQkvBiasesQwen3QkNorms) {
  const LayerGraph q2 = layer_of(hf("qwen2.5-3b.json"));
  EXPECT_EQ(operand(q2, "attn/q_proj/bias", 1).shape, (Shape{16 * 128}));
  EXPECT_EQ(operand(q2, "attn/k_proj/bias", 1).shape, (Shape{2 * 128}));
  EXPECT_EQ(norms(q2), 2);
  const LayerGraph q3 = layer_of(hf("qwen3-1.7b.json"));
  EXPECT_EQ(q3.count(OpKind::kRmsNorm), 4);  // input, q, k, post-attention
  EXPECT_FALSE(q3.has(Role::kQBias));
  EXPECT_EQ(operand(q3, "attn/k_norm", 1).shape, (Shape{128}));
}

TEST(Family, Gemma2SoftcapsTheScoresWithTanh) {
  const ModelSpec m = hf("gemma2-2b.json");
  const LayerGraph g = layer_of(m);
  ASSERT_EQ(g.count(OpKind::kTanh), 1);
  // tanh(scores / 50) * 50, before the mask.
  EXPECT_EQ(g.op(g.operands(g.by_name("attn/softcap_div"))[0]).name, "attn/scores");
  EXPECT_DOUBLE_EQ(operand(g, "attn/softcap_div", 1).scalar, 1.0 / 50.0);
  EXPECT_DOUBLE_EQ(operand(g, "attn/softcap", 1).scalar, 50.0);
  EXPECT_EQ(operand(g, "attn/mask_add", 0).name, "attn/softcap");
  EXPECT_EQ(g.count(OpKind::kRmsNorm), 4);
  EXPECT_EQ(m.final_softcap, 30.0);
  // Both layer types softcap (Gemma 2 alternates them).
  EXPECT_EQ(build_layer_graph(m.layer(LayerType::kSliding, 4096), parse_variant("ring", {})).count(OpKind::kTanh), 1);
}

TEST(Family, Cohere2HasOneLayerNormAndAParallelBlock) {
  const ModelSpec m = hf("cohere2-r7b.json");
  const LayerGraph g = layer_of(m);
  EXPECT_EQ(g.count(OpKind::kLayerNorm), 1);
  EXPECT_EQ(g.count(OpKind::kRmsNorm), 0);
  // The MLP reads the attention's normed input, not the residual after attention.
  EXPECT_EQ(operand(g, "mlp/gate_proj", 0).name, "attn/input_norm");
  EXPECT_EQ(operand(g, "mlp/up_proj", 0).name, "attn/input_norm");
  EXPECT_FALSE(g.has(Role::kPostNorm));
  EXPECT_FALSE(g.has(Role::kRopeCos));  // global layers: no RoPE
  EXPECT_EQ(m.logit_scale, 0.25);
}

TEST(Family, MistralSlidesEveryLayer) {
  const ModelSpec m = hf("mistral-7b.json");
  EXPECT_EQ(m.count(LayerType::kSliding), 32);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_EQ(layer_of(m).count(OpKind::kGelu), 0);
}

TEST(Family, SparkKeepsItsOwnLayer) {
  const LayerGraph g = layer_of(hf("spark2_5.json"));
  EXPECT_TRUE(g.has(Role::kQkv));
  EXPECT_TRUE(g.has(Role::kHeadGate));
  EXPECT_EQ(g.count(OpKind::kRmsNorm), 2);
  for (Vertex v : g.of_kind(OpKind::kRmsNorm)) EXPECT_EQ(g.op(v).norm_offset, 0.0);
  EXPECT_EQ(g.op(g.by_name("mlp/act")).gelu, GeluForm::kErf);
}

// Published totals (model cards / the HF safetensors index), within 0.5%.
TEST(Family, WholeModelParametersMatchThePublishedCounts) {
  const std::pair<const char*, double> published[] = {
      {"llama3.2-1b.json", 1.236e9}, {"llama3.2-3b.json", 3.213e9}, {"qwen2.5-3b.json", 3.086e9},
      {"qwen3-1.7b.json", 1.72e9},   {"gemma3-1b.json", 1.000e9},   {"gemma2-2b.json", 2.614e9},
      {"mistral-7b.json", 7.242e9},
  };
  for (const auto& [f, want] : published) {
    const ParamCount c = count_parameters(hf(f));
    EXPECT_NEAR(double(c.total), want, 0.005 * want) << f;
  }
}

TEST(Family, ParameterCountIsTheFormulaOfTheGraph) {
  // Llama 3.2 1B: per layer q, o [2048 x 2048]; k, v [2048 x 512]; 3 MLP [2048 x 8192]; 2 norms.
  const ParamCount c = count_parameters(hf("llama3.2-1b.json"));
  const int64_t per = 2 * 2048 * 2048 + 2 * 2048 * 512 + 3 * 2048 * 8192 + 2 * 2048;
  EXPECT_EQ(c.per_full_layer, per);
  EXPECT_EQ(c.embedding, int64_t(128256) * 2048);
  EXPECT_EQ(c.lm_head, 0);  // tied
  EXPECT_EQ(c.total, 16 * per + int64_t(128256) * 2048 + 2048);
  // Mistral unties: the LM head counts again.
  const ParamCount mi = count_parameters(hf("mistral-7b.json"));
  EXPECT_EQ(mi.lm_head, int64_t(32000) * 4096);
  // Spark against its config: fused qkv [2048 x (8 + 2*2) 256], g_proj [2048 x 8], out, MLP 6656.
  const ParamCount sp = count_parameters(load_model("spark-x2.5-1.7b"));
  const int64_t sp_per = 2048 * 12 * 256 + 2048 * 8 + 2048 * 2048 + 3 * 2048 * 6656 + 2 * 2048;
  EXPECT_EQ(sp.per_sliding_layer, sp_per);
  EXPECT_EQ(sp.total, 28 * sp_per + int64_t(131072) * 2048 + 2048);
}

TEST(Family, StructureSummaryCountsTheNorms) {
  EXPECT_EQ(structure_summary(hf("gemma3-1b.json")).norms_per_layer, 6);
  EXPECT_EQ(structure_summary(hf("gemma2-2b.json")).norms_per_layer, 4);
  EXPECT_EQ(structure_summary(hf("cohere2-r7b.json")).norms_per_layer, 1);
  EXPECT_EQ(structure_summary(hf("qwen3-1.7b.json")).norms_per_layer, 4);
  EXPECT_EQ(structure_summary(hf("llama3.2-1b.json")).rotary_dims_full, 64);
}

TEST(Family, GemmaYamlNamesItsFamily) {
  const ModelSpec m = load_model(std::string(LAYOUTX_CONFIG_DIR) + "/models/gemma-3-1b.yaml");
  EXPECT_EQ(m.family, Family::kGemma3);
  EXPECT_EQ(m.structure, hf("gemma3-1b.json").structure);
  EXPECT_EQ(count_parameters(m).total, count_parameters(hf("gemma3-1b.json")).total);
}

TEST(RopeScaling, Llama3FrequencyBandsAreTheFormula) {
  // theta 5e5, r 64, factor 32, low 1, high 4, original context 8192: wavelengths above 8192
  // are slowed 32x, below 2048 kept, between interpolated.
  const RopeSpec r{5e5, 64, RopeScaling::kLlama3, 32.0, 1.0, 4.0, 8192};
  for (int i = 0; i < 32; ++i) {
    const double f = std::pow(5e5, -2.0 * i / 64);
    const double wl = 2 * M_PI / f;
    double want = f;
    if (wl > 8192) want = f / 32;
    else if (wl >= 2048) {
      const double s = (8192 / wl - 1.0) / (4.0 - 1.0);
      want = (1 - s) * f / 32 + s * f;
    }
    EXPECT_DOUBLE_EQ(rope_inv_freq(r, i), want) << i;
  }
  EXPECT_DOUBLE_EQ(rope_inv_freq(r, 0), 1.0);          // the fastest pair is kept
  EXPECT_DOUBLE_EQ(rope_inv_freq(r, 31), std::pow(5e5, -62.0 / 64) / 32);  // the slowest slowed
}

// ---- Config keys that change the graph and are not modelled: refused, naming file and key. ----

std::string hf_error(const std::string& json) {
  return testing::error_message([&] { import_hf_config_text(json, "cfg.json"); });
}
const std::string kLlama =
    R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100, )";

TEST(FamilyErrors, UnmodelledKeysAreRefused) {
  EXPECT_NE(hf_error(kLlama + R"("mlp_bias": true})").find("cfg.json:"), std::string::npos);
  EXPECT_NE(hf_error(kLlama + R"("mlp_bias": true})").find("mlp_bias: true is not modelled"), std::string::npos);
  EXPECT_NE(hf_error(kLlama + R"("attention_bias": true})").find("attention_bias: true is not modelled"),
            std::string::npos);
  EXPECT_NE(hf_error(kLlama + R"("rope_scaling": {"rope_type": "yarn", "factor": 4}})")
                .find("rope_scaling.rope_type: unsupported rope scaling 'yarn'"),
            std::string::npos);
  EXPECT_NE(hf_error(kLlama + R"("rope_scaling": {"rope_type": "llama3", "factor": 4}})")
                .find("llama3 needs low_freq_factor"),
            std::string::npos);
  EXPECT_NE(hf_error(kLlama + R"("attn_logit_softcapping": 30})").find("attn_logit_softcapping: softcapping is modelled for gemma2"),
            std::string::npos);
  EXPECT_NE(hf_error(kLlama + R"("query_pre_attn_scalar": 64})").find("query_pre_attn_scalar: only Gemma"),
            std::string::npos);
  EXPECT_NE(hf_error(kLlama + R"("use_qk_norm": true})").find("use_qk_norm: true is not modelled for llama"),
            std::string::npos);
  // Accepted: the keys at their modelled values.
  EXPECT_EQ(hf_error(kLlama + R"("mlp_bias": false, "attention_bias": false, "tie_word_embeddings": false,
      "rope_scaling": {"rope_type": "linear", "factor": 2}})"), "");
  EXPECT_FALSE(import_hf_config_text(kLlama + R"("tie_word_embeddings": false})", "cfg.json").tied_embeddings);
}

}  // namespace
}  // namespace layoutx::model
