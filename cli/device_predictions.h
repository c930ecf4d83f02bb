// Predictions for the database's keys (regress, report --html), from each device's calibrated
// cost model built from the variant's graph: with --calibration FILE that file, else the
// database's latest calibration of the device, else the shipped one (cli/calibration_source.h).
// A device with a spec but no calibration gets "no predictor" (compared with its history only);
// a device name with no spec makes its keys' predictions fail (regress: ERROR, exit 2).
// Predictors and model specs are loaded once.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "costmodel/predictor.h"
#include "db/regress.h"
#include "db/sqlite.h"
#include "model/model_spec.h"

namespace layoutx::cli {

class DevicePredictions {
 public:
  DevicePredictions(db::Connection& conn, std::string calibration_file)
      : conn_(conn), calibration_file_(std::move(calibration_file)) {}

  // Loads the device's predictor once (null when it has none). A bad --calibration file throws
  // (the user's error, before any row is compared).
  costmodel::Predictor* load(const std::string& device);
  // db::PredictFn.
  std::optional<db::PredictedLatency> operator()(const db::MeasurementKey& k);
  // db::RegressOptions::predicts: whether the key's boundary is one of its device spec's
  // `boundaries` (a device without a spec has no predictor: true, and the row says so).
  bool predicts(const db::MeasurementKey& k);

  // Device -> (calibration id or "", where it came from), for every device asked about.
  const std::map<std::string, std::pair<std::string, std::string>>& sources() const { return sources_; }

 private:
  db::Connection& conn_;
  std::string calibration_file_;
  std::map<std::string, std::unique_ptr<costmodel::Predictor>> predictors_;
  std::map<std::string, model::ModelSpec> models_;
  std::map<std::string, std::pair<std::string, std::string>> sources_;
  std::map<std::string, std::optional<std::vector<std::string>>> boundaries_;  // per device; nullopt: no spec
  std::map<std::string, std::string> unknown_;  // device without a spec -> why its keys cannot be predicted
};

}  // namespace layoutx::cli
