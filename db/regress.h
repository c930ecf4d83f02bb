// Regression queries: for each (device, model, variant, layer, ctx, boundary) with layer
// measurements, the latest measurement against the prediction for it (outside the interval?)
// and against the previous measurement of the same key (slower by more than a tolerance?).
// "Latest" is ingest order (the run id): the database does not trust file dates.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "db/sqlite.h"

namespace layoutx::db {

struct MeasurementKey {
  std::string device, model, variant_key, layer_type;
  int ctx = 0;
  std::string boundary;  // figures of different boundaries are never compared with each other
};

// What a predictor said for a key (the cost model's Prediction, reduced to what is stored).
struct PredictedLatency {
  double ms = 0.0, low_ms = 0.0, high_ms = 0.0;  // point and interval, milliseconds
  std::string calibration_id;
};

// Returns the prediction for a key, nullopt when the device has no predictor. May throw Error
// (e.g. the model config is missing); regress reports that on the row, not as a failure of all.
using PredictFn = std::function<std::optional<PredictedLatency>(const MeasurementKey&)>;

struct RegressRow {
  MeasurementKey key;
  std::vector<double> history_ms;  // every measurement of the key, oldest first
  std::vector<std::string> history_at;  // when each was ingested (ISO-8601 UTC), same order
  double latest_ms = 0.0;
  std::optional<double> previous_ms;
  std::optional<double> change;    // (latest - previous) / previous
  bool slower_than_previous = false;
  std::optional<PredictedLatency> predicted;
  // "no predictor", "not predicted (boundary <b>)", "within interval", "slower than predicted", "faster than predicted",
  // or "prediction failed: <message>".
  std::string prediction_status;
  bool regression = false;         // slower than previous by > tolerance, or above the interval
  // The predictor threw (e.g. a model config or device spec the database names no longer
  // exists): the key could not be checked, so it is never "ok" (regress exits 2).
  bool prediction_failed = false;
};

// A row's verdict in words: "REGRESSION", "ERROR" (its prediction failed: not checked), or "ok".
inline const char* verdict(const RegressRow& row) {
  if (row.regression) return "REGRESSION";
  return row.prediction_failed ? "ERROR" : "ok";
}

struct RegressOptions {
  std::string device;        // "" = every device
  std::string model;         // "" = every model
  double tolerance = 0.03;   // relative slowdown against the previous measurement
  // Store each prediction made (once per calibration and key); needs a writable connection.
  // Off by default: a gate does not change the database it checks.
  bool record_predictions = false;
  // Whether the key's figure is what the device's cost model predicts (its boundary is one of
  // the device spec's `boundaries`); keys it is not (e.g. NetRun wall time) are compared only with
  // their own history. Unset: every key is predicted.
  std::function<bool(const MeasurementKey&)> predicts;
};

struct RegressResult {
  std::vector<RegressRow> rows;
  bool any_regression = false;
  int prediction_failures = 0;  // rows with prediction_failed
};

RegressResult regress(Connection& c, const RegressOptions& opt, const PredictFn& predict);

}  // namespace layoutx::db
