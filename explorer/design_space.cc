#include "explorer/design_space.h"

namespace layoutx::explorer {

using model::Variant;

std::vector<Variant> meaningful_variants(model::Precision precision, const model::AxisScope& scope) {
  return model::design_space().variants(Variant{}.set(precision), &scope);
}

Variant incumbent(model::LayerType type, model::Precision precision, const model::AxisScope& scope) {
  const auto& d = model::design_space();
  const Variant base = d.defaults_for(scope, Variant{}.set(precision));
  return d.preset(type == model::LayerType::kSliding ? "roll" : "ring", base);
}

}  // namespace layoutx::explorer
