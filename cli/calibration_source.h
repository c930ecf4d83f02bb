// Which calibration a cost-model verb predicts with, and saying so: `--calibration FILE`, else
// the database's latest for the device (`--db`, and regress's database), else the shipped one.
// Every output of predict, select, step, whatif and regress states the id and this source.
#pragma once
#include <memory>
#include <string>

#include "costmodel/device_spec.h"
#include "costmodel/predictor.h"
#include "db/device_predictions.h"
#include "db/sqlite.h"

namespace layoutx::cli {

struct LoadedPredictor {
  std::unique_ptr<costmodel::Predictor> predictor;
  costmodel::DeviceSpec device;  // the device spec it predicts for (identity, files, boundaries)
  // Where its calibration came from, e.g. "file cal.yaml", "database x.db (latest for galaxy-s25,
  // stored 2026-12-03T06:00:00Z)", "shipped configs/calibration/galaxy-s25.calibration.yaml".
  std::string source;
};

// `device` is a device name (configs/devices/NAME.yaml) or the path of a device .yaml.
// `calibration_file` non-empty: that file (any device spec). Else, with `conn`: the database's
// latest calibration of the device; when it has none, an error if `db_required`, else the one
// the device spec names (its hypotheses, or its saved calibration). Throws Error naming the
// device, file or database and what is missing.
// `evidence`: "team" uses the predictor as loaded; "all" weighs its hypotheses by the public
// records too (explorer/public_joint.h; an error for a single calibration); "" (the default) does
// so for the device's shipped mixture only (a file or a stored calibration is used as saved).
LoadedPredictor load_predictor(const std::string& device, const std::string& calibration_file, db::Connection* conn,
                               bool db_required, const std::string& evidence = "");

// The predictions of a database's keys (regress, report --html): every device's predictor from
// load_predictor (the file when given, and then its errors are the user's; else the database's
// latest, else the shipped one).
db::DevicePredictions database_key_predictions(const std::string& calibration_file, db::Connection& conn);

}  // namespace layoutx::cli
