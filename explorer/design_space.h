// The design space: every meaningful Variant (design.md, "The design space").
#pragma once
#include <vector>

#include "model/model_spec.h"
#include "model/variant.h"

namespace layoutx::explorer {

// Every meaningful variant at one precision: all combinations of the axes that pass
// Variant::validate() (new_score/new_value only vary with join=scores). 40 per precision.
std::vector<model::Variant> meaningful_variants(model::Precision precision);

// The layout each layer type had in the first device export ("roll"), the incumbent every
// change must beat: sliding layers roll their window (returns=window, join=keys); full layers
// concatenate keys and return the new entry (the notes measured no output cost for them).
model::Variant incumbent(model::LayerType type, model::Precision precision);

// Axes (precision aside) on which two variants differ.
int axis_changes(const model::Variant& from, const model::Variant& to);

}  // namespace layoutx::explorer
