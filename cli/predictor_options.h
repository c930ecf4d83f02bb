// The flags that choose the cost model: --device (a name under configs/devices/, or a device
// .yaml) and its calibration: --calibration FILE, or --db DB (the database's latest for the device), else the
// shipped one; --evidence all weighs its hypotheses by the public records too. Shared by every verb
// that predicts.
#pragma once
#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "costmodel/device_spec.h"
#include "costmodel/measurements.h"
#include "costmodel/predictor.h"
#include "support/json_writer.h"

namespace layoutx::cli {

struct PredictorOptions {
  std::string device = costmodel::kDefaultDevice;  // --device NAME|PATH
  std::string calibration;  // --calibration FILE
  std::string db;           // --db DB
  // --evidence: what weighs the device's hypotheses: "team" (its timings, the saved weights) or
  // "all" (the team's timings and the public records, explorer/public_joint.h). Unset: all for
  // the device's shipped mixture, a file or a stored calibration as saved (cli/calibration_source.h).
  std::string evidence;
  void add_to(CLI::App& app);
  // Loads the device's calibrated predictor and sets `source`. Throws Error naming the device,
  // file or database and what is missing.
  std::unique_ptr<costmodel::Predictor> load();
  std::string source;  // after load(): where the calibration came from (cli/calibration_source.h)
  // After load(): the device's layer timings and shares: its measurement file (calibration.measurements)
  // and, with --db, the database's timings of the device. Throws Error naming a file that is wrong.
  std::vector<costmodel::MeasurementRecord> device_timings() const;
  // The answer's provenance in --json: "device", "calibration_id", "calibration_source".
  void write_json_identity(JsonWriter& w, const costmodel::Predictor& predictor) const;
  costmodel::DeviceSpec spec;  // after load(): the device spec (identity, calibration files, boundaries)
};

}  // namespace layoutx::cli
