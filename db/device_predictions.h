// Predictions for the database's keys (regress, report --html): each key's graph, built from its
// model and variant, priced by its device's predictor. Which predictor a device gets is the
// caller's (`PredictorLoader`: the CLI's --calibration FILE, else the database's latest, else the
// shipped one); this class loads each once and says where it came from.
// A device with a spec but no predictor gets "no predictor" (compared with its history only);
// a device name with no spec makes its keys' predictions fail (regress: ERROR, exit 2).
// Predictors and model specs are loaded once.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "costmodel/predictor.h"
#include "db/regress.h"
#include "model/model_spec.h"

namespace layoutx::db {

// A device's predictor and where it came from (e.g. "database x.db (latest for galaxy-s25, ...)").
struct LoadedDevicePredictor {
  std::unique_ptr<costmodel::Predictor> predictor;
  std::string source;
};
// Loads the predictor of a device name; throws Error when it cannot.
using PredictorLoader = std::function<LoadedDevicePredictor(const std::string& device)>;

class DevicePredictions {
 public:
  // `loader_errors_are_fatal`: a failed load throws (a --calibration FILE the user named: their
  // error, before any row is compared); else the device has no predictor, said in sources().
  DevicePredictions(PredictorLoader loader, bool loader_errors_are_fatal)
      : loader_(std::move(loader)), loader_errors_are_fatal_(loader_errors_are_fatal) {}

  // Loads the device's predictor once (null when it has none).
  costmodel::Predictor* load(const std::string& device);
  // PredictFn.
  std::optional<PredictedLatency> operator()(const MeasurementKey& k);
  // RegressOptions::predicts: whether the key's boundary is one of its device spec's
  // `boundaries` (a device without a spec has no predictor: true, and the row says so).
  bool predicts(const MeasurementKey& k);

  // Device -> (calibration id or "", where it came from), for every device asked about.
  const std::map<std::string, std::pair<std::string, std::string>>& sources() const { return sources_; }

 private:
  PredictorLoader loader_;
  bool loader_errors_are_fatal_;
  std::map<std::string, std::unique_ptr<costmodel::Predictor>> predictors_;
  std::map<std::string, model::ModelSpec> models_;
  std::map<std::string, std::pair<std::string, std::string>> sources_;
  std::map<std::string, std::optional<std::vector<std::string>>> boundaries_;  // per device; nullopt: no spec
  std::map<std::string, std::string> unknown_;  // device without a spec -> why its keys cannot be predicted
};

}  // namespace layoutx::db
