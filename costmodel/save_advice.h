// Whose saved fit a file is, and what to tell a user whose device's saved fit is stale: the one
// answer the predictor's "refitting in memory" line and `calibrate --update-shipped` both give.
// A renamed copy of a device file still names the original's calibration files; saving over
// them would overwrite the original device's calibration, so --update-shipped refuses that and
// the advice says to give the copy its own paths first.
#pragma once
#include <string>

#include "costmodel/device_spec.h"

namespace layoutx::costmodel {

// The device a saved calibration or hypotheses document was written for (a calibration's
// `device:`, a hypotheses document's first member's); "" when the file is absent, unreadable or
// names none.
std::string saved_fit_owner(const std::string& path);

// The first of the device spec's saved-fit files (calibration.saved, calibration.hypotheses)
// that belongs to another device, as "PATH is the calibration of 'OWNER'"; "" when none does.
std::string others_saved_fit(const DeviceSpec& device);

// What saves the device's fit: "run `layoutx calibrate [--device SOURCE] --update-shipped` to
// save", or, when others_saved_fit() is not empty, how to give the copy its own files first (or
// save to a file with --out and predict with --calibration).
std::string save_advice(const DeviceSpec& device);

}  // namespace layoutx::costmodel
