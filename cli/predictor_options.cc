#include "cli/predictor_options.h"

#include "cli/calibration_source.h"
#include "db/schema.h"
#include "support/error.h"

namespace layoutx::cli {

void PredictorOptions::add_to(CLI::App& app) {
  app.add_option("--device", device, "device whose calibrated cost model predicts: a name under configs/devices/ or a device .yaml")->capture_default_str();
  auto* file = app.add_option("--calibration", calibration, "predict with this saved calibration file");
  app.add_option("--db", db, "predict with the latest calibration `calibrate --db` stored in this database")
      ->excludes(file);
}

std::unique_ptr<costmodel::Predictor> PredictorOptions::load() {
  // A calibration file, the database's latest, or the shipped hypotheses (cli/calibration_source.h).
  std::unique_ptr<db::Connection> conn;
  if (!db.empty()) conn = db::open_database_readonly(db);
  LoadedPredictor p = load_predictor(device, calibration, conn.get(), true);
  source = p.source;
  spec = std::move(p.device);
  return std::move(p.predictor);
}

void PredictorOptions::write_json_identity(JsonWriter& w, const costmodel::Predictor& predictor) const {
  w.field("device", predictor.device());
  w.field("calibration_id", predictor.calibration_id());
  w.field("calibration_source", source);
}

}  // namespace layoutx::cli
