// Printing selections and step comparisons (tables and JSON), shared by select and whatif.
#pragma once
#include <map>
#include <optional>
#include <ostream>
#include <vector>

#include "explorer/composition.h"
#include "explorer/context_answer.h"
#include "explorer/selection.h"
#include "explorer/whole_step.h"
#include "model/design_space.h"
#include "support/json_writer.h"

namespace layoutx::cli {

// Short name of a variant: its preset, or "preset+axis=value" for the axes that differ from the
// nearest preset, or the key. With the model's scope the presets are the model's own (a
// tanh-GELU model's ring is "ring", and "ring+gelu=erf" is the other activation); without it,
// the design-space table's defaults (Spark's).
std::string short_name(const model::Variant& v, const model::AxisScope* scope = nullptr);

// The whole step (ms per token, tokens/s, the layers-only figure and the LM head's share).
void print_whole_step_line(std::ostream& out, const explorer::WholeStep& s);
void write_whole_step_json(JsonWriter& w, const explorer::WholeStep& s);
// --head-precision: "" means the layers' precision.
model::Precision head_precision_or(const std::string& flag, model::Precision layers);

void print_choices_table(std::ostream& out, const explorer::ContextAnswer& a, const model::AxisScope* scope = nullptr);
void print_comparison_line(std::ostream& out, const explorer::Comparison& c);
// scope: the model, so that axes that do not apply to it (gelu for SiLU models) are not spelled.
void write_choice_json(JsonWriter& w, const explorer::Choice& c, std::optional<model::AxisScope> scope = std::nullopt);
// "axes": every axis that applies to v (and to the model, when its scope is given), with its value.
void write_variant_axes_json(JsonWriter& w, const model::Variant& v, std::optional<model::AxisScope> scope = std::nullopt);
void write_comparison_json(JsonWriter& w, const explorer::Comparison& c);

}  // namespace layoutx::cli
