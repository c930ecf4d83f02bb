// The words a planned measurement is printed with (next, propose): its variant named relative to
// its model, and what it settles.
#pragma once
#include <string>

#include "explorer/measurement_plan.h"

namespace layoutx::cli {

// A planned measurement's variant, named relative to its model (the layer's own activation).
std::string model_name(const model::Variant& v, const model::LayerSpec& layer);
// What a measurement settles, in words.
std::string settles(const explorer::PlannedMeasurement& m);

}  // namespace layoutx::cli
