// LayerRuntime: the harness's part of the device runtime between ORT runs (ring slot writes,
// window returns, masks of unwritten slots, rotary tables), checked without ORT.
#include <gtest/gtest.h>

#include <cmath>

#include "emit/history.h"
#include "model/builder.h"
#include "support/error.h"
#include "tests/emit/small_layers.h"

namespace layoutx::emit {
namespace {

using model::LayerType;

// A new-entry output whose every element is `value`.
TensorMap entry(const model::LayerSpec& L, float value) {
  TensorMap m;
  m["k_out"] = {{L.kv_heads, L.head_dim, 1}, std::vector<float>(static_cast<size_t>(L.kv_heads * L.head_dim), value)};
  m["v_out"] = {{L.kv_heads, 1, L.head_dim}, std::vector<float>(static_cast<size_t>(L.kv_heads * L.head_dim), value)};
  return m;
}
Tensor hidden(const model::LayerSpec& L) { return {{1, L.hidden}, std::vector<float>(static_cast<size_t>(L.hidden), 0.f)}; }

TEST(LayerRuntime, RingWritesSlotTModNAndUnmasksIt) {
  const auto L = testing::small_layer(LayerType::kSliding);  // N = 7
  auto g = model::build_layer_graph(L, model::preset("ring"));
  LayerRuntime rt(g, -1e4f);
  const int64_t N = L.cache_entries, D = L.head_dim;
  auto first = rt.inputs(hidden(L));
  for (int64_t j = 0; j < N; ++j) EXPECT_EQ(first["mask"].data[j], -1e4f) << j;
  EXPECT_EQ(first["mask"].data[N], 0.f);  // the new token
  for (int t = 0; t < 2 * N + 1; ++t) rt.absorb(entry(L, static_cast<float>(t + 1)));
  // After 2N+1 steps slot s holds the entry of the last step t with t mod N == s.
  auto in = rt.inputs(hidden(L));
  for (int64_t s = 0; s < N; ++s) {
    const float want = static_cast<float>((s == 0 ? 2 * N : N + s) + 1);
    EXPECT_EQ(in["k_cache"].data[static_cast<size_t>((1 * D + 3) * N + s)], want) << s;  // kv head 1, dim 3
    EXPECT_EQ(in["v_cache"].data[static_cast<size_t>((1 * N + s) * D + 3)], want) << s;
    EXPECT_EQ(in["mask"].data[s], 0.f);
  }
}

TEST(LayerRuntime, RollTakesTheWindowAndMasksTheOldestUnwrittenSlots) {
  const auto L = testing::small_layer(LayerType::kSliding);
  auto g = model::build_layer_graph(L, model::preset("roll"));
  LayerRuntime rt(g, -1e4f);
  const int64_t N = L.cache_entries;
  TensorMap out;
  out["k_out"] = {{2, 16, N}, std::vector<float>(static_cast<size_t>(2 * 16 * N), 3.f)};
  out["v_out"] = {{2, N, 16}, std::vector<float>(static_cast<size_t>(2 * 16 * N), 4.f)};
  rt.absorb(out);
  rt.absorb(out);
  auto in = rt.inputs(hidden(L));
  EXPECT_EQ(in["k_cache"].data, out["k_out"].data);
  // Two steps taken: the newest two slots (the end of the window) are valid.
  for (int64_t j = 0; j < N; ++j) EXPECT_EQ(in["mask"].data[j], j >= N - 2 ? 0.f : -1e4f) << j;
}

TEST(LayerRuntime, RotaryTablesAreNeoxHalves) {
  const auto L = testing::small_layer(LayerType::kFull);  // r = 4, theta 5e6
  auto c = LayerRuntime::rope_cos(L, 3), s = LayerRuntime::rope_sin(L, 3);
  ASSERT_EQ(c.shape, (model::Shape{1, 1, 4}));
  EXPECT_FLOAT_EQ(c.data[0], std::cos(3.0));
  EXPECT_FLOAT_EQ(c.data[1], static_cast<float>(std::cos(3.0 * std::pow(5e6, -0.5))));
  EXPECT_EQ(c.data[2], c.data[0]);
  EXPECT_FLOAT_EQ(s.data[3], static_cast<float>(std::sin(3.0 * std::pow(5e6, -0.5))));
}

TEST(LayerRuntime, AFullLayerStopsAtItsContext) {
  const auto L = testing::small_layer(LayerType::kFull);  // N = 11: 12 tokens
  auto g = model::build_layer_graph(L, model::preset("ring"));
  LayerRuntime rt(g, -1e4f);
  EXPECT_EQ(rt.max_steps(), L.cache_entries + 1);
  for (int t = 0; t < L.cache_entries + 1; ++t) {
    (void)rt.inputs(hidden(L));
    rt.absorb(entry(L, 1.f));
  }
  try {
    rt.inputs(hidden(L));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("holds 12 tokens; step 12 exceeds it"), std::string::npos) << e.what();
  }
}

TEST(LayerRuntime, AnOutputOfTheWrongShapeIsNamed) {
  const auto L = testing::small_layer(LayerType::kSliding);
  auto g = model::build_layer_graph(L, model::preset("ring"));
  LayerRuntime rt(g, -1e4f);
  auto out = entry(L, 1.f);
  out["k_out"].shape = {2, 1, 16};
  try {
    rt.absorb(out);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("output 'k_out' is [2,1,16], expected [2,16,1]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace layoutx::emit
