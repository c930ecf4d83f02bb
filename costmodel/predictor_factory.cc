#include "costmodel/predictor_factory.h"

#include <ostream>

#include "costmodel/hypotheses_document.h"
#include "support/error.h"
#include "support/paths.h"

namespace layoutx::costmodel {

std::unique_ptr<HypothesisPredictor> load_shipped_hypothesis_predictor(const DeviceSpec& device, std::ostream& log,
                                                                       bool* refitted) {
  if (refitted) *refitted = false;
  if (device.calibration.measurements.empty())
    throw Error(device.source + ": calibration.measurements: device " + device.name +
                " names no measurements to fit its hypotheses on");
  const std::string data_path = device_file(device.calibration.measurements);
  const std::string index_path = device_file(device.calibration.hypotheses);
  const std::string data_bytes = read_text_file(data_path);
  try {
    if (index_path.empty()) throw Error(device.source + ": calibration.hypotheses: none saved");
    const std::string text = read_text_file(index_path);
    if (!is_hypotheses_document(text))
      throw Error(index_path + ": not a hypotheses document (it must begin 'hypotheses_document: 1')");
    const std::string expected = hypotheses_source_hash({data_bytes}, device);
    return parse_hypotheses_document(text, index_path, device, load_device_rules(device), &expected);
  } catch (const Error& e) {
    log << "layoutx: hypothesis calibration unusable (" << e.what() << "); refitting in memory (run `layoutx calibrate --update-shipped` to save)\n";
  }
  std::vector<MeasurementRecord> records = load_measurements_text(data_bytes, data_path);
  if (refitted) *refitted = true;
  return make_predictor(fit_hypotheses(records, device, {device.calibration.measurements}), device);
}

std::unique_ptr<HypothesisPredictor> load_default_hypothesis_predictor(std::ostream& log) {
  return load_shipped_hypothesis_predictor(load_device_named(kDefaultDevice), log);
}

}  // namespace layoutx::costmodel
