#include "cli/predictor_options.h"

#include "cli/calibration_source.h"
#include "db/costmodel_records.h"
#include "db/schema.h"
#include "support/error.h"
#include "support/paths.h"

namespace layoutx::cli {

void PredictorOptions::add_to(CLI::App& app) {
  app.add_option("--device", device, "device whose calibrated cost model predicts: a name under configs/devices/ or a device .yaml")->capture_default_str();
  auto* file = app.add_option("--calibration", calibration, "predict with this saved calibration file");
  app.add_option("--db", db, "predict with the latest calibration `calibrate --db` stored in this database")
      ->excludes(file);
  app.add_option("--evidence", evidence,
                 "what weighs the device's hypotheses: team (its timings) or all (its timings and the public records "
                 "of configs/public/, `layoutx public --joint` shows the fit); default: all for the device's shipped "
                 "mixture of hypotheses, a --calibration file or --db calibration as saved")
      ->check(CLI::IsMember({"team", "all"}));
}

std::unique_ptr<costmodel::Predictor> PredictorOptions::load() {
  // A calibration file, the database's latest, or the shipped hypotheses (cli/calibration_source.h).
  std::unique_ptr<db::Connection> conn;
  if (!db.empty()) conn = db::open_database_readonly(db);
  LoadedPredictor p = load_predictor(device, calibration, conn.get(), true, evidence);
  source = p.source;
  spec = std::move(p.device);
  return std::move(p.predictor);
}

std::vector<costmodel::MeasurementRecord> PredictorOptions::device_timings() const {
  std::vector<costmodel::MeasurementRecord> timed;
  if (!spec.calibration.measurements.empty()) {
    const std::string path = costmodel::device_file(spec.calibration.measurements);
    // The shipped predictor was loaded from (or refitted on) this very file, so it has been
    // checked against its graphs; with --calibration or --db it has not.
    timed = calibration.empty() && db.empty() ? costmodel::load_measurements_unchecked(path)
                                              : costmodel::load_measurements(path);
    // Sources as outputs name files ("configs/...:line:col"), not this machine's paths.
    for (auto& r : timed)
      if (r.source.rfind(path, 0) == 0) r.source = shown_path(path) + r.source.substr(path.size());
  }
  if (!db.empty()) {
    auto conn = db::open_database_readonly(db);
    for (auto& t : db::costmodel_timings(*conn, spec.name, spec.boundaries, {})) timed.push_back(std::move(t.record));
  }
  return timed;
}

void PredictorOptions::write_json_identity(JsonWriter& w, const costmodel::Predictor& predictor) const {
  w.field("device", predictor.device());
  w.field("calibration_id", predictor.calibration_id());
  w.field("calibration_source", source);
}

}  // namespace layoutx::cli
