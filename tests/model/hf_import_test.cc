// The Hugging Face config.json importer: each family's fixture (tests/fixtures/hf/, written from
// the public values in shared/docs/models.md) gives the right layer pattern and fields.
#include <gtest/gtest.h>

#include <string>

#include "model/model_loader.h"
#include "support/error.h"
#include "tests/error_message.h"

namespace layoutx::model {
namespace {

const std::string kHf = std::string(LAYOUTX_TEST_DIR) + "/fixtures/hf/";

ModelSpec hf(const std::string& file) { return import_hf_config(kHf + file); }

std::string hf_error(const std::string& file) {
  return testing::error_message([&] { import_hf_config(kHf + file); });
}

// Layers i with (i + 1) % n == 0 among `count`.
std::vector<int> full_every(int n, int count) {
  std::vector<int> r;
  for (int i = 0; i < count; ++i)
    if ((i + 1) % n == 0) r.push_back(i);
  return r;
}

TEST(HfImport, Spark) {
  ModelSpec m = hf("spark2_5.json");
  EXPECT_EQ(m.source, kHf + "spark2_5.json");
  ASSERT_EQ(m.num_layers(), 28);
  EXPECT_EQ(m.layers_of(LayerType::kFull), (std::vector<int>{3, 7, 11, 15, 19, 23, 27}));
  EXPECT_EQ(m.count(LayerType::kSliding), 21);
  EXPECT_EQ(m.sliding_window, 512);
  EXPECT_TRUE(m.head_gate);
  EXPECT_EQ(m.activation, Activation::kGelu);
  EXPECT_EQ(m.rope_sliding, (RopeSpec{1e4, 256}));
  EXPECT_EQ(m.rope_full, (RopeSpec{5e6, static_cast<int>(256 * 0.25)}));
  // The importer and the shipped YAML agree on every field the graph builder uses.
  ModelSpec y = load_model("spark-x2.5-1.7b");
  EXPECT_EQ(m.hidden, y.hidden);
  EXPECT_EQ(m.intermediate, y.intermediate);
  EXPECT_EQ(m.heads, y.heads);
  EXPECT_EQ(m.kv_heads, y.kv_heads);
  EXPECT_EQ(m.head_dim, y.head_dim);
  EXPECT_EQ(m.vocab, y.vocab);
  EXPECT_EQ(m.layer_types, y.layer_types);
}

TEST(HfImport, Gemma3EverySixthFull) {
  ModelSpec m = hf("gemma3-1b.json");
  ASSERT_EQ(m.num_layers(), 26);
  EXPECT_EQ(m.layers_of(LayerType::kFull), full_every(6, 26));  // 5, 11, 17, 23
  EXPECT_EQ(m.count(LayerType::kSliding), 26 - 26 / 6);
  EXPECT_EQ(m.hidden, 1152);
  EXPECT_EQ(m.intermediate, 6912);
  EXPECT_EQ(m.heads, 4);
  EXPECT_EQ(m.kv_heads, 1);
  EXPECT_EQ(m.head_dim, 256);
  EXPECT_EQ(m.vocab, 262144);
  EXPECT_EQ(m.sliding_window, 512);
  EXPECT_EQ(m.activation, Activation::kGeluTanh);
  EXPECT_FALSE(m.head_gate);
  EXPECT_EQ(m.rope_sliding, (RopeSpec{1e4, 256}));  // rope_local_base_freq
  EXPECT_EQ(m.rope_full, (RopeSpec{1e6, 256}));     // rope_theta
}

TEST(HfImport, Gemma2Alternating) {
  ModelSpec m = hf("gemma2-2b.json");
  ASSERT_EQ(m.num_layers(), 26);
  for (int i = 0; i < 26; ++i) EXPECT_EQ(m.layer_types[i], i % 2 == 0 ? LayerType::kSliding : LayerType::kFull) << i;
  EXPECT_EQ(m.sliding_window, 4096);
  EXPECT_EQ(m.hidden, 2304);
  EXPECT_EQ(m.kv_heads, 4);
  EXPECT_EQ(m.rope_sliding, (RopeSpec{1e4, 256}));
  EXPECT_EQ(m.rope_full, (RopeSpec{1e4, 256}));
}

TEST(HfImport, MistralAllSliding) {
  ModelSpec m = hf("mistral-7b.json");
  EXPECT_EQ(m.count(LayerType::kSliding), 32);
  EXPECT_EQ(m.count(LayerType::kFull), 0);
  EXPECT_EQ(m.head_dim, 4096 / 32);  // no head_dim key: hidden / heads
  EXPECT_EQ(m.sliding_window, 4096);
  EXPECT_EQ(m.activation, Activation::kSilu);
  EXPECT_DOUBLE_EQ(m.rms_eps, 1e-5);
}

TEST(HfImport, Cohere2GlobalLayersWithoutRope) {
  ModelSpec m = hf("cohere2-r7b.json");
  EXPECT_EQ(m.layers_of(LayerType::kFull), full_every(4, 32));
  EXPECT_EQ(m.rope_full.rotary_dims, 0);
  EXPECT_EQ(m.rope_sliding, (RopeSpec{5e4, 4096 / 32}));
  EXPECT_EQ(m.layer(LayerType::kFull, 8192).rope.rotary_dims, 0);
  EXPECT_DOUBLE_EQ(m.rms_eps, 1e-5);  // layer_norm_eps
}

TEST(HfImport, LlamaAllFull) {
  ModelSpec m = hf("llama3.2-1b.json");
  EXPECT_EQ(m.count(LayerType::kFull), 16);
  EXPECT_FALSE(m.sliding_window.has_value());
  EXPECT_EQ(m.head_dim, 64);
  EXPECT_EQ(m.heads / m.kv_heads, 32 / 8);
  // rope_scaling: llama3, factor 32, low/high 1/4, original context 8192.
  EXPECT_EQ(m.rope_full, (RopeSpec{5e5, 64, RopeScaling::kLlama3, 32.0, 1.0, 4.0, 8192}));
  EXPECT_THROW(m.layer(LayerType::kSliding, 4096), Error);
}

TEST(HfImport, QwenAllFull) {
  ModelSpec m = hf("qwen3-1.7b.json");
  EXPECT_EQ(m.count(LayerType::kFull), 28);
  EXPECT_FALSE(m.sliding_window.has_value());  // sliding_window null, use_sliding_window false
  EXPECT_EQ(m.intermediate, 6144);
  EXPECT_EQ(m.vocab, 151936);
  EXPECT_EQ(m.rope_full, (RopeSpec{1e6, 128}));
}

TEST(HfImport, LayerTypesWinAndPartialRotary) {
  // layer_types overrides Gemma 2's alternation; partial_rotary_factor 0.33 of head_dim 20
  // rotates int(6.6) = 6 dims.
  std::string text = R"({"model_type": "gemma2", "hidden_size": 64, "intermediate_size": 128,
    "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 20,
    "vocab_size": 10, "sliding_window": 8, "partial_rotary_factor": 0.33,
    "layer_types": ["full_attention", "full_attention", "sliding_attention"]})";
  ModelSpec m = import_hf_config_text(text, "inline.json");
  EXPECT_EQ(m.layers_of(LayerType::kSliding), (std::vector<int>{2}));
  EXPECT_EQ(m.rope_full.rotary_dims, static_cast<int>(20 * 0.33));
  EXPECT_EQ(m.rope_sliding.rotary_dims, 6);
}

TEST(HfImport, OddRotaryDimsRejected) {
  // int(18 * 0.5) = 9 dims cannot be split in halves: ModelSpec::validate() says so.
  std::string text = R"({"model_type": "llama", "hidden_size": 72, "intermediate_size": 128,
    "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10, "partial_rotary_factor": 0.5})";
  try {
    import_hf_config_text(text, "odd.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "odd.json: rope.sliding.rotary_dims: must be even (NeoX half split), got 9\n"
              "odd.json: rope.full.rotary_dims: must be even (NeoX half split), got 9");
  }
}

TEST(HfImport, QwenSlidingAboveMaxWindowLayers) {
  std::string text = R"({"model_type": "qwen2", "hidden_size": 64, "intermediate_size": 128,
    "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 10,
    "sliding_window": 32, "use_sliding_window": true, "max_window_layers": 2})";
  ModelSpec m = import_hf_config_text(text, "inline.json");
  EXPECT_EQ(m.layers_of(LayerType::kSliding), (std::vector<int>{2, 3}));
  EXPECT_EQ(m.sliding_window, 32);
}

TEST(HfImport, MistralWithoutWindowIsAllFull) {
  std::string text = R"({"model_type": "mistral", "hidden_size": 64, "intermediate_size": 128,
    "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 10,
    "sliding_window": null})";
  ModelSpec m = import_hf_config_text(text, "inline.json");
  EXPECT_EQ(m.count(LayerType::kFull), 2);
  EXPECT_FALSE(m.sliding_window.has_value());
}

TEST(HfImport, Gemma3MultimodalReadsTextConfig) {
  std::string text = R"({"model_type": "gemma3", "vision_config": {"hidden_size": 1152},
    "text_config": {"model_type": "gemma3_text", "hidden_size": 2560, "intermediate_size": 10240,
      "num_hidden_layers": 12, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
      "vocab_size": 262208, "sliding_window": 1024, "sliding_window_pattern": 6,
      "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0}})";
  ModelSpec m = import_hf_config_text(text, "inline.json");
  EXPECT_EQ(m.hidden, 2560);
  EXPECT_EQ(m.layers_of(LayerType::kFull), full_every(6, 12));
  EXPECT_EQ(m.sliding_window, 1024);
}

TEST(HfImportErrors, SparkNeedsLayerTypes) {
  std::string text = R"({"model_type": "spark2_5", "hidden_size": 64, "intermediate_size": 128,
    "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 10,
    "sliding_window": 8, "use_sliding_window": "yes"})";
  try {
    import_hf_config_text(text, "s.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    // The map's position (its first key) stands for the missing key.
    EXPECT_EQ(std::string(e.what()),
              "s.json:3:48: use_sliding_window: must be true or false, got the string \"yes\"\n"
              "s.json:1:1: layer_types: required for spark2_5, got none");
  }
}

TEST(HfImportErrors, UnknownModelType) {
  EXPECT_EQ(hf_error("unknown-model-type.json"),
            kHf + "unknown-model-type.json:2:17: model_type: unsupported model type 'mamba' (supported: spark2_5, "
                  "gemma3, gemma3_text, gemma2, mistral, cohere2, llama, qwen2, qwen3)");
}

TEST(HfImportErrors, WrongTypesAndMissingKeys) {
  // A string where a number belongs, a list where an integer belongs, a missing required key;
  // the unknown "some_future_key" is not an error in a HF config.
  const std::string f = kHf + "bad-types.json";
  EXPECT_EQ(hf_error("bad-types.json"),
            f + ":4:24: intermediate_size: must be an integer, got the string \"6912\"\n" +
            f + ":1:1: vocab_size: required key is missing\n" +
            f + ":10:29: sliding_window_pattern: must be an integer, got a collection");
}

}  // namespace
}  // namespace layoutx::model
