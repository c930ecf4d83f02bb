#include "costmodel/device_fit.h"

#include "costmodel/freshness.h"
#include "costmodel/hypotheses_document.h"
#include "costmodel/op_level_predictor.h"
#include "costmodel/predictor_factory.h"
#include "support/error.h"

namespace layoutx::costmodel {

DeviceFit fit_device(const std::vector<MeasurementRecord>& records, const DeviceSpec& device,
                     const std::vector<std::string>& data_files) {
  DeviceFit fit;
  fit.single = calibrate(records, device, data_files);
  if (!device.hypotheses.empty()) {
    fit.hypotheses = fit_hypotheses(records, device, data_files);
    fit.predictor = predictor_from_hypotheses(*fit.hypotheses, device, kPredictorWeightMass);
  } else {
    fit.predictor = predictor_from_calibration(device, fit.single.calibration, load_device_rules(device));
  }
  return fit;
}

std::string DeviceFit::document() const {
  return hypotheses ? hypotheses_document(*hypotheses) : calibration_document(single.calibration, &single);
}

void DeviceFit::save_hypotheses(const std::vector<std::string>& file_bytes, const DeviceSpec& device,
                                const std::string& path) const {
  if (!hypotheses) throw Error(device.source + ": device " + device.name + " has no hypotheses to save");
  costmodel::save_hypotheses(*hypotheses, fit_stamp(SavedFit::kHypotheses, file_bytes, device), path);
}

}  // namespace layoutx::costmodel
