#include "explorer/design_space.h"

#include "support/error.h"

namespace layoutx::explorer {

using model::Variant;

std::vector<Variant> meaningful_variants(model::Precision precision) {
  std::vector<Variant> out;
  // Odometer over the axes' value lists (precision fixed).
  std::vector<std::string> axes;
  for (const auto& a : model::axis_names())
    if (a != "precision") axes.push_back(a);
  std::vector<size_t> idx(axes.size(), 0);
  while (true) {
    Variant v;
    v.precision = precision;
    for (size_t i = 0; i < axes.size(); ++i) v.set(axes[i], model::axis_values(axes[i])[idx[i]]);
    try {
      v.validate();
      out.push_back(v);
    } catch (const Error&) {
      // meaningless combination: not part of the space
    }
    size_t i = 0;
    while (i < axes.size() && ++idx[i] == model::axis_values(axes[i]).size()) idx[i++] = 0;
    if (i == axes.size()) break;
  }
  return out;
}

Variant incumbent(model::LayerType type, model::Precision precision) {
  return model::preset(type == model::LayerType::kSliding ? "roll" : "ring", precision);
}

int axis_changes(const Variant& from, const Variant& to) {
  int n = 0;
  for (const auto& a : model::axis_names())
    if (a != "precision" && model::axis_value(from, a) != model::axis_value(to, a)) ++n;
  return n;
}

}  // namespace layoutx::explorer
