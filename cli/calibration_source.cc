#include "cli/calibration_source.h"

#include <iostream>

#include "costmodel/calibration.h"
#include "costmodel/op_level_predictor.h"
#include "costmodel/predictor_factory.h"
#include "costmodel/hypotheses_document.h"
#include "db/stored_calibration.h"
#include "support/error.h"
#include "support/paths.h"

namespace layoutx::cli {

namespace {

std::unique_ptr<costmodel::Predictor> predictor_with(const costmodel::DeviceSpec& dev, costmodel::Calibration cal) {
  return std::make_unique<costmodel::OpLevelPredictor>(dev, std::move(cal), costmodel::load_device_rules(dev));
}

}  // namespace

LoadedPredictor load_predictor(const std::string& device, const std::string& calibration_file, db::Connection* conn,
                               bool db_required) {
  costmodel::DeviceSpec dev = costmodel::load_device_named(device);
  // 1. A calibration file: used as it is (it was fitted on whatever it names; not refitted).
  if (!calibration_file.empty()) {
    costmodel::Calibration cal = costmodel::load_calibration(calibration_file, dev);
    return {predictor_with(dev, std::move(cal)), dev, "file " + calibration_file};
  }
  // 2. The database's latest calibration of the device.
  if (conn) {
    if (auto stored = db::latest_calibration(*conn, dev.name)) {
      const std::string name = conn->path() + ": calibrations/" + stored->id;
      const std::string source = "database " + conn->path() + " (latest for " + dev.name + ", stored " + stored->created_at + ")";
      if (costmodel::is_hypotheses_document(stored->document))  // the kept hypotheses, by weight
        return {costmodel::parse_hypotheses_document(stored->document, name, dev, costmodel::load_device_rules(dev)), dev, source};
      costmodel::Calibration cal = costmodel::parse_calibration(stored->document, name, dev);
      return {predictor_with(dev, std::move(cal)), dev, source};
    }
    if (db_required)
      throw Error("--db: " + conn->path() + " holds no calibration for '" + dev.name +
                  "' (`layoutx calibrate --db " + conn->path() + "` stores one)");
  }
  // 3. The calibration the device spec names.
  const costmodel::CalibrationFiles& files = dev.calibration;
  if (files.measurements.empty() && files.saved.empty() && files.hypotheses.empty())
    throw Error("--device: no calibrated cost model for '" + dev.name + "' (" + dev.source +
                " names no calibration files; give --calibration FILE or --db DB)");
  if (!dev.hypotheses.empty() && !files.measurements.empty()) {
    // The device's hypotheses, each calibrated on its data, combined by weight
    // (costmodel/hypothesis_predictor.h; refitted in memory when the saved file is stale, said on stderr).
    bool refitted = false;
    auto p = costmodel::load_shipped_hypothesis_predictor(dev, std::cerr, &refitted);
    const std::string data = shown_path(costmodel::device_file(files.measurements));
    std::string source = std::string("shipped hypotheses ") +
                         (refitted ? "fitted in memory on " + data + " (no saved hypothesis calibration of " + dev.name +
                                         " matches it)"
                                   : shown_path(costmodel::device_file(files.hypotheses))) +
                         ", " + std::to_string(p->size()) + " kept, combined by weight";
    return {std::move(p), dev, source};
  }
  bool refitted = false;
  auto p = costmodel::load_shipped_predictor(dev, std::cerr, &refitted);
  std::string source = "shipped " + (refitted ? "calibration fitted in memory on " + shown_path(costmodel::device_file(files.measurements)) +
                                                    " (no saved calibration of " + dev.name + " matches it)"
                                              : shown_path(costmodel::device_file(files.saved)));
  return {std::move(p), dev, source};
}

}  // namespace layoutx::cli
