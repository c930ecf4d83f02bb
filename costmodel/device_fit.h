// A device fitted on measurement records, as `calibrate` and the CPU loop need it: the device
// spec's own structure fitted (with its residuals and leave-one-out report), each of its
// competing hypotheses fitted when it has some, and the predictor the verbs use built from them
// (costmodel/predictor_factory.h), with the one document that saves that predictor.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/calibration.h"
#include "costmodel/device_spec.h"
#include "costmodel/hypothesis_fit.h"
#include "costmodel/measurements.h"
#include "costmodel/predictor.h"

namespace layoutx::costmodel {

struct DeviceFit {
  FitReport single;                         // the device spec as written (its base structure)
  std::optional<HypothesisSet> hypotheses;  // each hypothesis fitted, when the device has any
  // What the verbs predict with: the kept hypotheses (kPredictorWeightMass) mixed by weight, or
  // the single calibration (the device's rules for legality).
  std::unique_ptr<Predictor> predictor;
  // The document that saves `predictor` (a hypotheses document, or the single calibration's
  // document with its report), as `calibrate --db` stores it and predictor_from_document reads it.
  std::string document() const;
  // Writes the kept hypotheses as the device's hypotheses file (calibrate --update-shipped),
  // stamped fit_stamp(kHypotheses, file_bytes, device) (costmodel/freshness.h). Needs hypotheses.
  void save_hypotheses(const std::vector<std::string>& file_bytes, const DeviceSpec& device,
                       const std::string& path) const;
};

// Fits `device` on `records`; `data_files` are recorded as the calibrations' provenance.
DeviceFit fit_device(const std::vector<MeasurementRecord>& records, const DeviceSpec& device,
                     const std::vector<std::string>& data_files);

}  // namespace layoutx::costmodel
