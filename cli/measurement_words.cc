#include "cli/measurement_words.h"

#include "cli/choice_output.h"
#include "cli/table.h"

namespace layoutx::cli {

std::string model_name(const model::Variant& v, const model::LayerSpec& layer) {
  const model::AxisScope scope(layer);
  return short_name(v, &scope);
}

std::string settles(const explorer::PlannedMeasurement& m) {
  if (m.kind == explorer::PlannedMeasurement::Kind::kCompileOnly)
    return "the legality of " + m.legality_question + ", for " + std::to_string(m.graphs_sharing) +
           (m.graphs_sharing == 1 ? " graph" : " graphs") + " that would be faster";
  // An op-level profile: which op class's time it pins (the most valuable one), as now predicted.
  const std::string pins = m.kind == explorer::PlannedMeasurement::Kind::kOpProfile
                               ? "pins the " + m.profile_class + " time of a timed build (now " + fmt(m.class_ms) +
                                     " ms of " + fmt(m.predicted_ms) + "); "
                               : "";
  if (!m.current || !m.alternative || m.p_choice_changes < 0.005)
    return pins + "no decision is likely to change (P < 0.005): it would only sharpen intervals";
  return pins + m.decision + ": " + model_name(*m.current, m.layer) + " or " + model_name(*m.alternative, m.layer) + " (P it changes to " +
         model_name(*m.alternative, m.layer) + " = " + fmt(m.p_alternative, 2) + ")";
}

}  // namespace layoutx::cli
