// The explorer's view of the design space (model/design_space.h holds the table): the variants
// it chooses among and the incumbent every change must beat.
#pragma once
#include <vector>

#include "model/design_space.h"
#include "model/model_spec.h"
#include "model/variant.h"

namespace layoutx::explorer {

// Every meaningful variant at one precision for a model's layer shape (the table's variants():
// new_score/new_value only vary with join=scores, gelu only for GELU models). Spark: 40.
std::vector<model::Variant> meaningful_variants(model::Precision precision, const model::AxisScope& scope = {});

// The layout each layer type had in the first device export, the incumbent every change must
// beat: sliding layers roll their window ("roll"); full layers concatenate keys and return the
// new entry ("ring": the notes measured no output cost for them). Every other axis at the
// model's own default (gelu: its hidden_act).
model::Variant incumbent(model::LayerType type, model::Precision precision, const model::AxisScope& scope = {});

// Layout axes (precision aside) on which two variants differ.
inline int axis_changes(const model::Variant& from, const model::Variant& to) {
  return model::design_space().axis_changes(from, to);
}

}  // namespace layoutx::explorer
