#include "costmodel/predictor.h"

#include <algorithm>
#include <cmath>

namespace layoutx::costmodel {

double Predictor::difference_half_width_ms(const Prediction& a, const Prediction& b) const {
  // Without a model of the shared error, treat the two marginal intervals as independent.
  return std::hypot(0.5 * (a.high_ms - a.low_ms), 0.5 * (b.high_ms - b.low_ms));
}

double z_of_level(double level) {
  // Inverse of erf by bisection (80 halvings of [0, 10]: exact to double precision).
  double lo = 0.0, hi = 10.0;
  for (int i = 0; i < 80; ++i) {
    const double mid = 0.5 * (lo + hi);
    (std::erf(mid / std::sqrt(2.0)) < level ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

double normal_below_zero(double mean, double sd) {
  if (!(sd > 0)) return mean < 0 ? 1.0 : (mean > 0 ? 0.0 : 0.5);
  return 0.5 * std::erfc(mean / (sd * std::sqrt(2.0)));
}

double Predictor::probability_faster(const Prediction& a, const Prediction& b) const {
  const double sd = difference_half_width_ms(a, b) / z_of_level(std::clamp(a.interval_level, 0.5, 0.999));
  return normal_below_zero(a.latency_ms - b.latency_ms, sd);
}

std::vector<BeliefComponent> Predictor::belief_components() const {
  auto b = belief();
  if (!b) return {};
  return {BeliefComponent{1.0, 0, std::move(*b)}};
}

}  // namespace layoutx::costmodel
