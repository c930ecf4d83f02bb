// The combined predictor as one text document: what `calibrate --db` stores in the database
// (calibrations.coefficients), so that predict / select / step / whatif / regress with --db
// predict with the same mixture of hypotheses the shipped files give, not with the base
// structure alone. Shape (YAML):
//   hypotheses_document: 1
//   method: "<the weighting>"
//   members:            # the kept hypotheses (kept_hypotheses: 99% of the weight), in the spec's order
//     - name: <hypothesis name of the device spec>
//       weight: <its weight, not renormalized>
//       calibration: |  # the member's calibration document (costmodel::calibration_document)
//         ...
#pragma once
#include <memory>
#include <string>

#include "costmodel/hypotheses.h"

namespace layoutx::costmodel {

std::string hypotheses_document(const HypothesisSet& set, double mass = kPredictorWeightMass);
// True when `text` is such a document (a stored calibration may also be a single calibration).
bool is_hypotheses_document(const std::string& text);
// Reads it back for `device` (each member's structure is the device's hypothesis of that name).
// Throws Error naming `name` (and the member) when it is malformed or names an unknown hypothesis.
std::unique_ptr<HypothesisPredictor> parse_hypotheses_document(const std::string& text, const std::string& name,
                                                               const DeviceSpec& device, const RuleSet& rules);

}  // namespace layoutx::costmodel
