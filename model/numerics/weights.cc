#include "model/numerics/weights.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "support/error.h"

namespace layoutx::model::numerics {

std::map<Role, Shape> weight_shapes(const LayerSpec& L) {
  const int64_t H = L.hidden, nh = L.heads, kv = L.kv_heads, D = L.head_dim, I = L.intermediate;
  const LayerStructure& S = L.structure;
  std::map<Role, Shape> s{
      {Role::kInputNorm, {H}}, {Role::kOutProj, {nh * D, H}}, {Role::kMlpGate, {H, I}},
      {Role::kMlpUp, {H, I}},  {Role::kMlpDown, {I, H}},
  };
  if (!S.parallel_block) s[Role::kPostNorm] = {H};
  if (S.qkv_fused) {
    s[Role::kQkv] = {H, (nh + 2 * kv) * D};
  } else {
    s[Role::kQProj] = {H, nh * D};
    s[Role::kKProj] = {H, kv * D};
    s[Role::kVProj] = {H, kv * D};
  }
  if (S.qkv_bias) {
    s[Role::kQBias] = {nh * D};
    s[Role::kKBias] = {kv * D};
    s[Role::kVBias] = {kv * D};
  }
  if (S.qk_norm) {
    s[Role::kQNorm] = {D};
    s[Role::kKNorm] = {D};
  }
  if (S.sandwich_norms) {
    s[Role::kAttnPostNorm] = {H};
    s[Role::kMlpPostNorm] = {H};
  }
  if (L.head_gate) s[Role::kHeadGate] = {H, nh};
  return s;
}

bool is_norm(Role r) {
  return r == Role::kInputNorm || r == Role::kPostNorm || r == Role::kQNorm || r == Role::kKNorm ||
         r == Role::kAttnPostNorm || r == Role::kMlpPostNorm;
}
bool is_bias(Role r) { return r == Role::kQBias || r == Role::kKBias || r == Role::kVBias; }
bool is_projection(Role r) { return !is_norm(r) && !is_bias(r); }

LayerWeights seeded_weights(const LayerSpec& layer, uint64_t seed) {
  LayerWeights w;
  for (const auto& [role, shape] : weight_shapes(layer)) {
    std::seed_seq seq{uint32_t(seed), uint32_t(seed >> 32), uint32_t(role), 0x77u};
    std::mt19937_64 rng(seq);
    const bool proj = is_projection(role);
    const double fan_in = double(shape[0]);
    Tensor<double> t(shape);
    if (proj) {
      // Student's t, nu = 5 (variance nu / (nu - 2)), scaled to standard deviation sd.
      constexpr double kNu = 5;
      const double sd = std::max(0.02, 0.9 / std::sqrt(fan_in));
      const double to_sd = sd * std::sqrt((kNu - 2) / kNu);
      std::student_t_distribution<double> st(kNu);
      for (auto& x : t.data) x = to_sd * st(rng);
    } else if (is_bias(role)) {
      std::normal_distribution<double> n(0.0, 0.1);  // Qwen2's q/k/v biases: small, centred
      for (auto& x : t.data) x = n(rng);
    } else {
      // Norm weights near their multiplier 1; Gemma stores w - 1 (its norm multiplies by 1 + w).
      const double mean = layer.structure.norm == NormKind::kRmsOnePlus ? 0.0 : 1.0;
      std::normal_distribution<double> n(mean, 0.05);
      for (auto& x : t.data) x = n(rng);
    }
    w.emplace(role, std::move(t));
  }
  return w;
}

void check_weights(const LayerSpec& layer, const LayerWeights& w, const std::string& what) {
  ErrorList e;
  for (const auto& [role, shape] : weight_shapes(layer)) {
    auto it = w.find(role);
    if (it == w.end()) e.add(what + ": weight " + role_name(role) + " is missing");
    else if (it->second.shape != shape)
      e.add(what + ": weight " + role_name(role) + " has shape " + to_string(it->second.shape) + ", the layer needs " +
            to_string(shape));
    else if (it->second.size() != numel(shape))
      e.add(what + ": weight " + role_name(role) + " holds " + std::to_string(it->second.size()) + " values for shape " +
            to_string(shape));
  }
  e.throw_if_any();
}

}  // namespace layoutx::model::numerics
