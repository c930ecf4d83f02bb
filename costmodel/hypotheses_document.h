// The combined predictor as one text document: what `calibrate --update-shipped` writes as the
// device's hypotheses file (calibration.hypotheses) and what `calibrate --db` stores in the
// database (calibrations.coefficients), so that every verb predicts with the same mixture of
// hypotheses. One atomic file: no member can come from another save than its weights.
// Shape (YAML):
//   hypotheses_document: 1
//   method: "<the weighting>"
//   source_hash: "<hash>"  # optional: hypotheses_source_hash of the data and device it was fitted on
//   members:               # the kept hypotheses (kept_hypotheses: 99% of the weight), in the spec's order
//     - name: <hypothesis name of the device spec>
//       weight: <its weight, not renormalized>
//       calibration: |     # the member's calibration document (costmodel::calibration_document)
//         ...
//     - name: <another>
//       weight: <...>
//       same_calibration_as: <an earlier member's name>  # fitted identically (fitted_identically)
//       calibration_id: <its own calibration's id>       # (the combined id hashes every member's)
// The hypotheses below the kept mass are not in it: `layoutx calibrate` fits and reports them all.
#pragma once
#include <memory>
#include <string>

#include "costmodel/hypothesis_fit.h"
#include "costmodel/hypothesis_predictor.h"
#include "costmodel/mixture.h"

namespace layoutx::costmodel {

std::string hypotheses_document(const HypothesisSet& set, double mass = kPredictorWeightMass,
                                const std::string& source_hash = "");
// True when `text` is such a document (a stored calibration may also be a single calibration).
bool is_hypotheses_document(const std::string& text);
// Reads it back for `device` (each member's structure is the device's hypothesis of that name).
// Throws Error naming `name` (and the member) when it is malformed or names an unknown hypothesis.
// With `expected_source`, a document whose source_hash differs (or is missing) is refused before
// its members are read: the data or the device spec changed since it was written. `source_out`
// (if given) gets the document's source_hash ("" when it has none), for the freshness check
// (costmodel/freshness.h).
std::unique_ptr<HypothesisPredictor> parse_hypotheses_document(const std::string& text, const std::string& name,
                                                               const DeviceSpec& device, const RuleSet& rules,
                                                               const std::string* expected_source = nullptr,
                                                               std::string* source_out = nullptr);

// Saves the combined predictor (the kept hypotheses' weights and calibrations) as one hypotheses
// document, atomically; `source` is hypotheses_source_hash over the data files and the device
// (hypotheses included), so a loader sees when to refit.
void save_hypotheses(const HypothesisSet& set, const std::string& source, const std::string& path);
// Hash of the data files' bytes and of every hypothesis's derived spec.
std::string hypotheses_source_hash(const std::vector<std::string>& file_bytes, const DeviceSpec& device);

}  // namespace layoutx::costmodel
