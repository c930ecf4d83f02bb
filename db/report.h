// What the database holds, per device and model: counts, coverage of the design space (which
// variants were never measured), and the calibration error over time.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "db/sqlite.h"
#include "model/model_spec.h"

namespace layoutx::db {

struct CoverageCell {
  std::string layer_type;  // sliding / full
  std::string preset;      // roll / ring / score-join
  std::string precision;   // fp16 / w8a16 / w4a16
  int measurements = 0;    // layer measurements of exactly that variant and layer type
};

struct CalibrationError {
  std::string calibration_id;
  std::string first_used;      // earliest made_at of its predictions (ISO-8601 UTC)
  int predictions = 0;         // predictions with a measurement of the same key
  double mean_abs_rel_error = 0.0;  // mean |predicted - measured| / measured, measured = latest
  std::optional<double> loo_error;  // from the calibrations table, when recorded
};

struct DeviceModelReport {
  std::string device, model;
  int runs = 0, layer_measurements = 0, op_measurements = 0, compile_outcomes = 0, op_shares = 0;
  int variants_measured = 0;                 // distinct variant keys with a layer measurement
  int space_size = 0;                        // explored variants x precisions, per layer type, summed
  int space_measured = 0;                    // of those, measured at least once
  std::vector<CoverageCell> presets;         // presets x precisions x layer types
  std::vector<CalibrationError> calibration; // ordered by first use
};

// Every (device, model) pair with layer measurements; `device` / `model` filter ("" = all).
std::vector<DeviceModelReport> report(Connection& c, const std::string& device = "", const std::string& model = "");

// Every variant the explorer enumerates (all explored axis values x precisions), canonical keys;
// of one layer type's graphs when given (a full layer has no sliding_cache axis).
std::vector<std::string> all_variant_keys(std::optional<model::LayerType> layer = std::nullopt);

}  // namespace layoutx::db
