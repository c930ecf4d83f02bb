#include "costmodel/predictor.h"

#include <cmath>

namespace layoutx::costmodel {

double Predictor::difference_half_width_ms(const Prediction& a, const Prediction& b) const {
  // Without a model of the shared error, treat the two marginal intervals as independent.
  return std::hypot(0.5 * (a.high_ms - a.low_ms), 0.5 * (b.high_ms - b.low_ms));
}

std::vector<BeliefComponent> Predictor::belief_components() const {
  auto b = belief();
  if (!b) return {};
  return {BeliefComponent{1.0, 0, std::move(*b)}};
}

}  // namespace layoutx::costmodel
