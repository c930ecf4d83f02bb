// Whether a saved fit is still the fit of the device's data: the one check every loader of a
// saved predictor makes (costmodel/predictor_factory.h), for both kinds of saved fit.
// A fit saved from files alone is stamped with fit_stamp(): a hash of the data files' bytes and
// of the device spec (for a hypotheses document also every hypothesis's definition and the
// weighting). A calibration also carries its data_hash: the hash of the parsed records and the
// priors, which formatting and comments do not change.
#pragma once
#include <string>
#include <vector>

#include "costmodel/device_spec.h"
#include "costmodel/measurements.h"

namespace layoutx::costmodel {

enum class SavedFit {
  kCalibration,  // one calibration (costmodel/calibration.h)
  kHypotheses,   // a hypotheses document (costmodel/hypotheses_document.h)
};

// The stamp a fit of `kind` saved from these data files' bytes and this device carries
// (Calibration::source_hash, a hypotheses document's source_hash).
std::string fit_stamp(SavedFit kind, const std::vector<std::string>& file_bytes, const DeviceSpec& device);

struct Freshness {
  bool fresh = false;
  // When not fresh: what differs, for the log (empty when the saved fit had nothing to compare).
  std::string why;
  // The records of `data_bytes` when the check parsed them (the slow path), for a refit to reuse.
  bool parsed = false;
  std::vector<MeasurementRecord> records;
};

// Fast path: `stamp` is non-empty and equals fit_stamp(kind, {data_bytes}, device); nothing is
// parsed. Slow path, for a calibration (kind kCalibration): the records of `data_bytes` (named
// `data_path` in errors) parsed and validated, fresh when their data_hash equals `data_hash`
// (only formatting or comments changed). Throws Error when the records do not parse.
Freshness check_freshness(SavedFit kind, const std::string& stamp, const std::string& data_hash,
                          const std::string& data_bytes, const std::string& data_path, const DeviceSpec& device);

}  // namespace layoutx::costmodel
