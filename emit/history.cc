#include "emit/history.h"

#include <cmath>

#include "support/error.h"

namespace layoutx::emit {

using model::KvReturn;
using model::LayerType;

LayerRuntime::LayerRuntime(const model::LayerGraph& g, float masked) : g_(g), masked_(masked) {
  const auto& L = g.layer;
  const int64_t kv = L.kv_heads, D = L.head_dim, N = L.cache_entries;
  k_cache_ = {{kv, D, N}, std::vector<float>(static_cast<size_t>(kv * D * N), 0.0f)};
  v_cache_ = {{kv, N, D}, std::vector<float>(static_cast<size_t>(kv * N * D), 0.0f)};
  written_.assign(static_cast<size_t>(N), false);
}

int64_t LayerRuntime::max_steps() const {
  if (g_.variant.returns() == KvReturn::kNewEntry && g_.layer.type == LayerType::kFull)
    return g_.layer.cache_entries + 1;
  return INT64_MAX;
}

static Tensor rope_table(const model::LayerSpec& L, int64_t position, bool sin) {
  const int r = L.rope.rotary_dims;
  Tensor t{{1, 1, r}, std::vector<float>(static_cast<size_t>(r))};
  for (int i = 0; i < r / 2; ++i) {
    // Angle in float64, then rounded: positions up to 1e5 keep float32 accuracy.
    const double a = static_cast<double>(position) * model::rope_inv_freq(L.rope, i);
    const float v = static_cast<float>(sin ? std::sin(a) : std::cos(a));
    t.data[static_cast<size_t>(i)] = v;
    t.data[static_cast<size_t>(i + r / 2)] = v;
  }
  return t;
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
    if (!written_[static_cast<size_t>(j)]) mask.data[static_cast<size_t>(j)] = masked_;
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
    k_cache_ = get("k_out", {kv, D, N});
    v_cache_ = get("v_out", {kv, N, D});
    // Written slots are the last min(t+1, N).
    const int64_t filled = std::min<int64_t>(t_ + 1, N);
    for (int64_t j = 0; j < N; ++j) written_[static_cast<size_t>(j)] = j >= N - filled;
  } else {
    if (t_ >= N && L.type == LayerType::kFull) {
      // The last token a full layer's context holds: its entry has no slot, and no step follows.
      ++t_;
      return;
    }
    const int64_t slot = L.type == LayerType::kSliding ? t_ % N : t_;
    const Tensor& k = get("k_out", {kv, D, 1});
    const Tensor& v = get("v_out", {kv, 1, D});
    for (int64_t h = 0; h < kv; ++h)
      for (int64_t d = 0; d < D; ++d) {
        k_cache_.data[static_cast<size_t>((h * D + d) * N + slot)] = k.data[static_cast<size_t>(h * D + d)];
        v_cache_.data[static_cast<size_t>((h * N + slot) * D + d)] = v.data[static_cast<size_t>(h * D + d)];
      }
    written_[static_cast<size_t>(slot)] = true;
  }
  ++t_;
}

}  // namespace layoutx::emit
