// Which predictor a device gets, decided in one place (in the spirit of Halide adams2019's
// make_default_cost_model, which its search and its trainer both call).
#pragma once
#include <iosfwd>
#include <memory>

#include "costmodel/device_spec.h"
#include "costmodel/hypothesis_predictor.h"

namespace layoutx::costmodel {

// The combined predictor every verb uses for a device with hypotheses: the saved hypothesis
// calibration its spec names (calibration.hypotheses, fitted on calibration.measurements) when
// fresh and fitted for this device, else a refit in memory on the measurements (said on `log`).
// Throws Error when the device names no measurements. `refitted` (if given) says whether it refit.
std::unique_ptr<HypothesisPredictor> load_shipped_hypothesis_predictor(const DeviceSpec& device, std::ostream& log,
                                                                       bool* refitted = nullptr);
// The same for the default device (kDefaultDevice).
std::unique_ptr<HypothesisPredictor> load_default_hypothesis_predictor(std::ostream& log);

}  // namespace layoutx::costmodel
