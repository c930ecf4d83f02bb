#include "costmodel/predictor_factory.h"

#include <ostream>

#include "costmodel/freshness.h"
#include "costmodel/hypotheses_document.h"
#include "costmodel/hypothesis_fit.h"
#include "costmodel/hypothesis_predictor.h"
#include "costmodel/op_level_predictor.h"
#include "costmodel/save_advice.h"
#include "support/error.h"
#include "support/paths.h"

namespace layoutx::costmodel {

std::unique_ptr<Predictor> predictor_from_document(const std::string& text, const std::string& name,
                                                   const DeviceSpec& device) {
  if (is_hypotheses_document(text))  // the kept hypotheses, by weight
    return parse_hypotheses_document(text, name, device, load_device_rules(device));
  return predictor_from_calibration(device, parse_calibration(text, name, device), load_device_rules(device));
}

std::unique_ptr<Predictor> predictor_from_file(const std::string& path, const DeviceSpec& device) {
  return predictor_from_document(read_text_file(path), path, device);
}

std::unique_ptr<Predictor> predictor_from_calibration(const DeviceSpec& device, Calibration calibration, RuleSet rules) {
  return std::make_unique<OpLevelPredictor>(device, std::move(calibration), std::move(rules));
}

std::unique_ptr<Predictor> predictor_from_hypotheses(const HypothesisSet& set, const DeviceSpec& device, double mass) {
  return make_predictor(set, device, mass);
}

std::unique_ptr<Predictor> fit_predictor(const std::vector<MeasurementRecord>& records, const DeviceSpec& device,
                                         const RuleSet& rules, bool hypotheses) {
  if (device.hypotheses.empty() || !hypotheses)
    return predictor_from_calibration(device, calibrate(records, device).calibration, rules);
  return make_predictor(fit_hypotheses(records, device), rules);
}

std::unique_ptr<OpLevelPredictor> load_shipped_predictor(const DeviceSpec& device_in, std::ostream& log, bool* refitted) {
  if (refitted) *refitted = false;
  DeviceSpec device = device_in;
  const CalibrationFiles& files = device.calibration;
  if (files.measurements.empty() && files.saved.empty())
    throw Error(device.source + ": calibration: device " + device.name +
                " names no saved calibration or measurements (calibration.saved, calibration.measurements)");
  const std::string cal_path = device_file(files.saved);
  Calibration cal;
  if (!files.saved.empty()) {
    try {
      cal = load_calibration(cal_path, device);
    } catch (const Error& e) {
      if (files.measurements.empty()) throw;
      log << "layoutx: saved calibration unusable (" << e.what() << "); refitting in memory\n";
    }
  }
  // Without a measurements file the saved calibration is taken as it is.
  if (!files.measurements.empty()) {
    const std::string data_path = device_file(files.measurements);
    Freshness f = check_freshness(SavedFit::kCalibration, cal.source_hash, cal.data_hash, read_text_file(data_path),
                                  data_path, device);
    if (!f.fresh) {
      if (!f.why.empty())
        log << "layoutx: " << cal_path << ": " << f.why << "; refitting in memory (" << save_advice(device) << ")\n";
      cal = calibrate(f.records, device, {files.measurements}).calibration;
      if (refitted) *refitted = true;
    }
  }
  RuleSet rules = load_device_rules(device);
  return std::make_unique<OpLevelPredictor>(std::move(device), std::move(cal), std::move(rules));
}

std::unique_ptr<OpLevelPredictor> load_default_predictor(std::ostream& log) {
  return load_shipped_predictor(load_device_named(kDefaultDevice), log);
}

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
    std::string stamp;
    auto p = parse_hypotheses_document(text, index_path, device, load_device_rules(device), nullptr, &stamp);
    const Freshness f = check_freshness(SavedFit::kHypotheses, stamp, "", data_bytes, data_path, device);
    if (!f.fresh) throw Error(index_path + ": " + f.why);
    return p;
  } catch (const Error& e) {
    log << "layoutx: hypothesis calibration unusable (" << e.what() << "); refitting in memory (" << save_advice(device)
        << ")\n";
  }
  std::vector<MeasurementRecord> records = load_measurements_text(data_bytes, data_path);
  if (refitted) *refitted = true;
  return make_predictor(fit_hypotheses(records, device, {device.calibration.measurements}), device);
}

std::unique_ptr<HypothesisPredictor> load_default_hypothesis_predictor(std::ostream& log) {
  return load_shipped_hypothesis_predictor(load_device_named(kDefaultDevice), log);
}

ShippedPredictor shipped_predictor(const DeviceSpec& dev, std::ostream& log) {
  const CalibrationFiles& files = dev.calibration;
  if (files.measurements.empty() && files.saved.empty() && files.hypotheses.empty())
    throw Error("--device: no calibrated cost model for '" + dev.name + "' (" + dev.source +
                " names no calibration files; give --calibration FILE or --db DB)");
  ShippedPredictor out;
  if (!dev.hypotheses.empty() && !files.measurements.empty()) {
    // The device's hypotheses, each calibrated on its data, combined by weight
    // (costmodel/hypothesis_predictor.h; refitted in memory when the saved file is stale, said on `log`).
    auto p = load_shipped_hypothesis_predictor(dev, log, &out.refitted);
    const std::string data = shown_path(device_file(files.measurements));
    out.source = std::string("shipped hypotheses ") +
                 (out.refitted ? "fitted in memory on " + data + " (no saved hypothesis calibration of " + dev.name +
                                     " matches it)"
                               : shown_path(device_file(files.hypotheses))) +
                 ", " + std::to_string(p->hypothesis_count()) + " kept, combined by weight";
    out.predictor = std::move(p);
    return out;
  }
  out.predictor = load_shipped_predictor(dev, log, &out.refitted);
  out.source = "shipped " + (out.refitted ? "calibration fitted in memory on " + shown_path(device_file(files.measurements)) +
                                                " (no saved calibration of " + dev.name + " matches it)"
                                          : shown_path(device_file(files.saved)));
  return out;
}

}  // namespace layoutx::costmodel
