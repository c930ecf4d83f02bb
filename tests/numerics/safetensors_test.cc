// The safetensors reader and the config-driven weight map, on files the tests write.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "model/numerics/safetensors.h"
#include "support/error.h"
#include "tests/error_message.h"
#include "tiny_layer.h"
#include "tests/temp_dir.h"

namespace layoutx::model::numerics {
namespace {

std::string temp_file(const std::string& name) {
  static const layoutx::test::TempDir root("numerics-test");  // removed at exit
  return root / name;
}

std::string message_of(const std::function<void()>& f) { return testing::error_message(f); }

#define EXPECT_MESSAGE(call, text) EXPECT_NE(message_of([&] { call; }).find(text), std::string::npos) << message_of([&] { call; })

std::string read_all(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}
void write_all(const std::string& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

// The layer's weights as a checkpoint stores them: HF names, Linear weights [out, in].
std::map<std::string, Tensor<double>> checkpoint_of(const LayerWeights& w, int layer_index) {
  std::map<std::string, Tensor<double>> m;
  const std::string pre = "model.layers." + std::to_string(layer_index) + ".";
  for (const auto& [role, t] : w) {
    Tensor<double> s = t;
    if (is_projection(role)) {  // [in, out] -> [out, in]
      s = Tensor<double>({t.shape[1], t.shape[0]});
      for (int64_t i = 0; i < t.shape[0]; ++i)
        for (int64_t o = 0; o < t.shape[1]; ++o) s[o * t.shape[0] + i] = t[i * t.shape[1] + o];
    }
    m.emplace(pre + (is_projection(role) ? "w." : "n.") + role_name(role) + ".weight", std::move(s));
  }
  return m;
}

const char* kMap = R"(
linear_layout: out_in
tensors:
  input_layernorm: model.layers.{i}.n.input_layernorm.weight
  q_k_v_proj: model.layers.{i}.w.q_k_v_proj.weight
  g_proj: model.layers.{i}.w.g_proj.weight
  out_proj: model.layers.{i}.w.out_proj.weight
  post_attention_layernorm: model.layers.{i}.n.post_attention_layernorm.weight
  gate_proj: model.layers.{i}.w.gate_proj.weight
  up_proj: model.layers.{i}.w.up_proj.weight
  down_proj: model.layers.{i}.w.down_proj.weight
)";

TEST(Safetensors, RoundTripsF32F16Bf16) {
  Tensor<double> t({2, 3}, {1.0, -2.5, 0.1, 1e-3, 300.0, -0.0078125});
  for (const char* dtype : {"F32", "F16", "BF16"}) {
    const std::string p = temp_file(std::string("rt_") + dtype);
    write_safetensors(p, {{"a", t}, {"b", Tensor<double>({4}, 0.5)}}, dtype);
    SafetensorsFile f(p);
    ASSERT_TRUE(f.has("a"));
    EXPECT_EQ(f.entries().at("a").dtype, dtype);
    const Tensor<double> r = f.read("a");
    EXPECT_EQ(r.shape, t.shape);
    const double rel = std::string(dtype) == "F32" ? 1e-7 : std::string(dtype) == "F16" ? 1e-3 : 8e-3;
    for (int64_t i = 0; i < t.size(); ++i) EXPECT_NEAR(r[i], t[i], rel * std::fabs(t[i])) << dtype << i;
    EXPECT_EQ(f.read("b").data, std::vector<double>(4, 0.5));
    std::filesystem::remove(p);
  }
}

TEST(Safetensors, LoadsALayerByTheWeightMapAndTransposesLinears) {
  const LayerSpec layer = tiny_layer(LayerType::kSliding);
  const LayerWeights w = seeded_weights(layer, 4);
  const std::string p = temp_file("layer");
  write_safetensors(p, checkpoint_of(w, 3));
  const LayerWeights r = load_layer_weights(SafetensorsFile(p), load_weight_map_text(kMap, "map.yaml"), layer, 3);
  for (const auto& [role, t] : w) {
    ASSERT_EQ(r.at(role).shape, t.shape) << role_name(role);
    for (int64_t i = 0; i < t.size(); ++i) ASSERT_EQ(r.at(role)[i], double(float(t[i]))) << role_name(role);
  }
  std::filesystem::remove(p);
}

TEST(Safetensors, TruncatedFile) {
  const std::string p = temp_file("trunc");
  write_safetensors(p, {{"a", Tensor<double>({16, 16}, 1.0)}});
  const std::string bytes = read_all(p);
  write_all(p, bytes.substr(0, bytes.size() - 100));
  EXPECT_MESSAGE(SafetensorsFile f(p), "tensor 'a': truncated: its data ends at byte 1024 of the data section, which holds only 924 bytes");
  write_all(p, bytes.substr(0, 5));
  EXPECT_MESSAGE(SafetensorsFile f(p), "truncated: 5 bytes, a safetensors file starts with an 8-byte header length");
  write_all(p, bytes.substr(0, 20));
  EXPECT_MESSAGE(SafetensorsFile f(p), "truncated: the header length says");
  std::filesystem::remove(p);
}

TEST(Safetensors, HeaderThatLiesAboutSizes) {
  const std::string p = temp_file("lies");
  write_safetensors(p, {{"a", Tensor<double>({4, 4}, 1.0)}});
  std::string bytes = read_all(p);
  const size_t at = bytes.find("\"shape\":[4,4]");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 13, "\"shape\":[4,5]");  // same length: only the claim changes
  write_all(p, bytes);
  EXPECT_MESSAGE(SafetensorsFile f(p),
                 "tensor 'a': the header lies about its size: shape [4,5] of F32 needs 80 bytes, data_offsets give 64");
  std::filesystem::remove(p);
}

TEST(Safetensors, MissingTensorAndWrongShape) {
  const LayerSpec layer = tiny_layer(LayerType::kSliding);
  auto ckpt = checkpoint_of(seeded_weights(layer, 4), 0);
  ckpt.erase("model.layers.0.w.up_proj.weight");
  ckpt["model.layers.0.w.down_proj.weight"] = Tensor<double>({48, 32});  // [in, out]: not transposed
  const std::string p = temp_file("missing");
  write_safetensors(p, ckpt);
  const std::string msg =
      message_of([&] { load_layer_weights(SafetensorsFile(p), load_weight_map_text(kMap, "map.yaml"), layer, 0); });
  EXPECT_NE(msg.find("tensor 'model.layers.0.w.up_proj.weight' (up_proj): missing from the file"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tensor 'model.layers.0.w.down_proj.weight' (down_proj): shape [48,32], the layer needs [32,48] "
                     "([out, in], as nn.Linear stores it)"),
            std::string::npos)
      << msg;
  // Another layer index: every tensor is missing.
  EXPECT_MESSAGE(load_layer_weights(SafetensorsFile(p), load_weight_map_text(kMap, "map.yaml"), layer, 5),
                 "'model.layers.5.n.input_layernorm.weight' (input_layernorm): missing from the file");
  std::filesystem::remove(p);
}

TEST(Safetensors, NotJsonAndBadEntries) {
  const std::string p = temp_file("notjson");
  std::string header = "{\"a\": {\"dtype\": \"Q7\", \"shape\": [1], \"data_offsets\": [0, 1]}}";
  std::string bytes(8, '\0');
  bytes[0] = static_cast<char>(header.size());
  write_all(p, bytes + header + "x");
  EXPECT_MESSAGE(SafetensorsFile f(p), "tensor 'a': unknown dtype 'Q7'");
  header = "[1, 2]";
  bytes[0] = static_cast<char>(header.size());
  write_all(p, bytes + header);
  EXPECT_MESSAGE(SafetensorsFile f(p), "header is not a JSON object");
  std::filesystem::remove(p);
  EXPECT_MESSAGE(SafetensorsFile f(temp_file("nonexistent")), "cannot open the safetensors file");
}

TEST(WeightMap, UnknownRoleAndMissingRoleAreErrors) {
  const std::string msg = message_of([] {
    load_weight_map_text("tensors:\n  q_k_v_proj: a\n  qkv_proj: b\nlinear_layout: sideways\n", "m.yaml");
  });
  EXPECT_NE(msg.find("tensors.qkv_proj"), std::string::npos) << msg;
  EXPECT_NE(msg.find("linear_layout: must be out_in or in_out, got 'sideways'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tensors.down_proj"), std::string::npos) << msg;  // required, absent
}

TEST(WeightMap, TheShippedSparkMapNamesEveryRole) {
  const WeightMap m = load_weight_map(std::string(LAYOUTX_CONFIG_DIR) + "/models/spark-x2.5-1.7b.weights.yaml");
  EXPECT_EQ(m.names.size(), 8u);
  EXPECT_EQ(m.names.at(Role::kQkv), "model.layers.{i}.self_attn.q_k_v_proj.weight");
  EXPECT_TRUE(m.linear_out_in);
}

}  // namespace
}  // namespace layoutx::model::numerics
