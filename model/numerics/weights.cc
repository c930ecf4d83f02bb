#include "model/numerics/weights.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "support/error.h"

namespace layoutx::model::numerics {

std::map<Role, Shape> weight_shapes(const LayerSpec& L) {
  const int64_t H = L.hidden, nh = L.heads, kv = L.kv_heads, D = L.head_dim, I = L.intermediate;
  std::map<Role, Shape> s{
      {Role::kInputNorm, {H}},        {Role::kQkv, {H, (nh + 2 * kv) * D}}, {Role::kOutProj, {nh * D, H}},
      {Role::kPostNorm, {H}},         {Role::kMlpGate, {H, I}},             {Role::kMlpUp, {H, I}},
      {Role::kMlpDown, {I, H}},
  };
  if (L.head_gate) s[Role::kHeadGate] = {H, nh};
  return s;
}

bool is_projection(Role r) { return r != Role::kInputNorm && r != Role::kPostNorm; }

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
    } else {
      std::normal_distribution<double> n(1.0, 0.05);
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
