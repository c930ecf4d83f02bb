#include "costmodel/mixture.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace layoutx::costmodel {

std::vector<size_t> kept_hypotheses(const std::vector<double>& weights, double share) {
  std::vector<size_t> order(weights.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return weights[a] > weights[b]; });
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<size_t> kept;
  double mass = 0;
  for (size_t h : order) {
    if (!kept.empty() && share < 1 && mass >= share * total) break;
    kept.push_back(h);
    mass += weights[h];
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

std::vector<double> pseudo_bma_plus_weights(const std::vector<std::vector<double>>& lpd, int draws, uint64_t seed) {
  const size_t H = lpd.size();
  std::vector<double> w(H, 0.0);
  if (H == 0) return w;
  const size_t n = lpd.front().size();
  std::mt19937_64 rng(seed);
  std::gamma_distribution<double> gamma(1.0, 1.0);
  std::vector<double> alpha(n), elpd(H);
  for (int d = 0; d < draws; ++d) {
    double sum = 0;
    for (double& a : alpha) sum += (a = gamma(rng));  // Dirichlet(1, ..., 1) via gammas
    for (size_t h = 0; h < H; ++h) {
      elpd[h] = 0;
      for (size_t i = 0; i < n; ++i) elpd[h] += static_cast<double>(n) * alpha[i] / sum * lpd[h][i];
    }
    const double top = *std::max_element(elpd.begin(), elpd.end());
    double z = 0;
    for (size_t h = 0; h < H; ++h) z += std::exp(elpd[h] - top);
    for (size_t h = 0; h < H; ++h) w[h] += std::exp(elpd[h] - top) / z / draws;
  }
  return w;
}

Mixture mix(const std::vector<double>& w, const std::vector<double>& mu, const std::vector<double>& sd) {
  Mixture m;
  double second = 0;
  for (size_t h = 0; h < w.size(); ++h) {
    m.mean += w[h] * mu[h];
    second += w[h] * (sd[h] * sd[h] + mu[h] * mu[h]);
  }
  m.sd = std::sqrt(std::max(0.0, second - m.mean * m.mean));
  return m;
}

}  // namespace layoutx::costmodel
