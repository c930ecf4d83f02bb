#include "emit/history.h"

#include <cmath>

#include "model/numerics/kv_cache.h"
#include "model/numerics/runtime.h"
#include "support/error.h"

namespace layoutx::emit {

using model::KvReturn;
using model::LayerType;

LayerRuntime::LayerRuntime(const model::LayerGraph& g, float masked) : g_(g), masked_(masked) {
  const auto& L = g.layer;
  const int64_t kv = L.kv_heads, D = L.head_dim, N = L.cache_entries;
  k_cache_ = {model::numerics::k_cache_shape(g.variant.k_layout(), kv, D, N),
              std::vector<float>(static_cast<size_t>(kv * D * N), 0.0f)};
  v_cache_ = {{kv, N, D}, std::vector<float>(static_cast<size_t>(kv * N * D), 0.0f)};
}

int64_t LayerRuntime::max_steps() const {
  if (g_.variant.returns() == KvReturn::kNewEntry && g_.layer.type == LayerType::kFull)
    return g_.layer.cache_entries + 1;
  return INT64_MAX;
}

// The numerics' rotary tables (float64), rounded to float32.
static Tensor rope_table(const model::LayerSpec& L, int64_t position, bool sin) {
  std::vector<double> c, s;
  model::numerics::rope_tables(L.rope, position, c, s);
  const std::vector<double>& table = sin ? s : c;
  return Tensor{{1, 1, L.rope.rotary_dims}, std::vector<float>(table.begin(), table.end())};
}
Tensor LayerRuntime::rope_cos(const model::LayerSpec& L, int64_t position) { return rope_table(L, position, false); }
Tensor LayerRuntime::rope_sin(const model::LayerSpec& L, int64_t position) { return rope_table(L, position, true); }

TensorMap LayerRuntime::inputs(const Tensor& hidden) const {
  const auto& L = g_.layer;
  const int64_t N = L.cache_entries;
  if (t_ >= max_steps())
    throw Error("runtime: a full layer at ctx " + std::to_string(L.context) + " holds " + std::to_string(max_steps()) +
                " tokens; step " + std::to_string(t_) + " exceeds it");
  TensorMap m;
  if (hidden.shape != model::Shape{1, L.hidden})
    throw Error("runtime: hidden_in is " + model::to_string(hidden.shape) + ", the layer needs [1," +
                std::to_string(L.hidden) + "]");
  m["hidden_in"] = hidden;
  m["k_cache"] = k_cache_;
  m["v_cache"] = v_cache_;
  Tensor mask{{1, 1, N + 1}, std::vector<float>(static_cast<size_t>(N + 1), 0.0f)};
  for (int64_t j = 0; j < N; ++j)
    if (!model::numerics::kv_slot_open(g_.variant.returns(), t_, j, N, L.window)) mask.data[static_cast<size_t>(j)] = masked_;
  m["mask"] = std::move(mask);
  if (L.rope.rotary_dims > 0) {
    m["rope_cos"] = rope_cos(L, t_);
    m["rope_sin"] = rope_sin(L, t_);
  }
  return m;
}

void LayerRuntime::absorb(const TensorMap& outputs) {
  const auto& L = g_.layer;
  const int64_t kv = L.kv_heads, D = L.head_dim, N = L.cache_entries;
  const model::KLayout kl = g_.variant.k_layout();
  auto get = [&](const char* name, const model::Shape& want) -> const Tensor& {
    auto it = outputs.find(name);
    if (it == outputs.end()) throw Error(std::string("runtime: the step has no output '") + name + "'");
    if (it->second.shape != want)
      throw Error(std::string("runtime: output '") + name + "' is " + model::to_string(it->second.shape) +
                  ", expected " + model::to_string(want));
    return it->second;
  };
  if (g_.variant.returns() == KvReturn::kWindow) {
    // Roll: the returned window is the next cache; slots fill from the newest (last) end.
    k_cache_ = get("k_out", model::numerics::k_cache_shape(kl, kv, D, N));
    v_cache_ = get("v_out", {kv, N, D});
  } else {
    // The last token a full layer's context holds has no slot, and no step follows.
    const int64_t slot = model::numerics::kv_entry_slot(L.type, t_, N);
    if (slot >= 0) {
      const Tensor& k = get("k_out", model::numerics::k_cache_shape(kl, kv, D, 1));
      const Tensor& v = get("v_out", {kv, 1, D});
      model::numerics::write_kv_entry(k_cache_.data, v_cache_.data, k.data, v.data, kv, D, N, slot, kl);
    }
  }
  ++t_;
}

}  // namespace layoutx::emit
