#include "cli/calibration_source.h"

#include <iostream>

#include "costmodel/calibration.h"
#include "costmodel/op_level_predictor.h"
#include "costmodel/hypotheses.h"
#include "db/stored_calibration.h"
#include "support/error.h"
#include "support/paths.h"

namespace layoutx::cli {

namespace {

std::unique_ptr<costmodel::Predictor> predictor_with(costmodel::DeviceSpec dev, costmodel::Calibration cal) {
  return std::make_unique<costmodel::OpLevelPredictor>(std::move(dev), std::move(cal),
                                                   costmodel::load_rules(config_path(costmodel::kDefaultRules)));
}

}  // namespace

LoadedPredictor load_predictor(const std::string& device, const std::string& calibration_file, db::Connection* conn,
                               bool db_required) {
  // 1. A calibration file: used as it is (it was fitted on whatever it names; not refitted).
  if (!calibration_file.empty()) {
    costmodel::DeviceSpec dev = costmodel::load_device_named(device);
    costmodel::Calibration cal = costmodel::load_calibration(calibration_file, dev);
    return {predictor_with(std::move(dev), std::move(cal)), "file " + calibration_file};
  }
  // 2. The database's latest calibration of the device.
  if (conn) {
    if (auto stored = db::latest_calibration(*conn, device)) {
      costmodel::DeviceSpec dev = costmodel::load_device_named(device);
      const std::string name = conn->path() + ": calibrations/" + stored->id;
      costmodel::Calibration cal = costmodel::parse_calibration(stored->document, name, dev);
      return {predictor_with(std::move(dev), std::move(cal)),
              "database " + conn->path() + " (latest for " + device + ", stored " + stored->created_at + ")"};
    }
    if (db_required)
      throw Error("--db: " + conn->path() + " holds no calibration for '" + device +
                  "' (`layoutx calibrate --db " + conn->path() + "` stores one)");
  }
  // 3. The shipped calibration.
  if (device != costmodel::kDefaultDevice)
    throw Error("--device: no calibrated cost model for '" + device + "' (available: " + costmodel::kDefaultDevice +
                "; or give --calibration FILE)");
  // The device's hypotheses, each calibrated on the shipped data, combined by weight
  // (costmodel/hypotheses.h; refitted in memory when the saved file is stale, said on stderr).
  auto p = costmodel::load_default_hypothesis_predictor(std::cerr);
  std::string source = std::string("shipped hypotheses configs/") + costmodel::kDefaultHypotheses + ", " +
                       std::to_string(p->size()) + " kept, combined by weight";
  return {std::move(p), source};
}

}  // namespace layoutx::cli
