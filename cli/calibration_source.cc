#include "cli/calibration_source.h"

#include <iostream>

#include "costmodel/predictor_factory.h"
#include "costmodel/public_records.h"
#include "db/stored_calibration.h"
#include "explorer/public_joint.h"
#include "support/error.h"
#include "support/paths.h"

namespace layoutx::cli {

namespace {

// The team's hypotheses weighed again by the public records (explorer/public_joint.h): asked
// (`all`), or by default for the device's shipped mixture. Anything else is used as it is.
LoadedPredictor weigh(LoadedPredictor p, const std::string& evidence, bool shipped) {
  const bool mixture = p.predictor && p.predictor->hypothesis_count() > 0;
  if (evidence == "team" || (evidence.empty() && (!shipped || !mixture))) return p;
  if (!mixture) throw Error("--evidence all: " + p.source + " is one calibration, not a mixture of hypotheses to weigh");
  const std::string path = costmodel::shipped_public_timings();
  explorer::JointWeights joint;
  try {
    joint = explorer::public_joint_weights(*p.predictor, path, p.device);
  } catch (const Error& e) {
    if (evidence == "all") throw;
    // By default the records are extra evidence: without them the team's weights stand, said.
    std::cerr << "layoutx: the public records do not weigh the hypotheses (" << e.what() << "); the team's weights stand\n";
    return p;
  }
  if (joint.rates + joint.floors + joint.parts == 0) {
    if (evidence == "all") throw Error("--evidence all: no public record is priced on " + p.device.name + "'s chip");
    return p;
  }
  p.predictor = explorer::public_joint_predictor(*p.predictor, joint.weights);
  p.source += "; weighed again with " + std::to_string(joint.rates) + " public decode rates, " +
              std::to_string(joint.floors) + " CI floors and " + std::to_string(joint.parts) + " part times of " +
              shown_path(path) + ", " +
              std::to_string(p.predictor->hypothesis_count()) + " kept";
  return p;
}

}  // namespace

LoadedPredictor load_predictor(const std::string& device, const std::string& calibration_file, db::Connection* conn,
                               bool db_required, const std::string& evidence) {
  costmodel::DeviceSpec dev = costmodel::load_device_named(device);
  // 1. A calibration file, whatever it holds (one calibration or a hypotheses document): used as
  //    it is (it was fitted on whatever it names; not refitted).
  if (!calibration_file.empty())
    return weigh({costmodel::predictor_from_file(calibration_file, dev), dev, "file " + calibration_file}, evidence, false);
  // 2. The database's latest calibration of the device.
  if (conn) {
    if (auto stored = db::latest_calibration(*conn, dev.name)) {
      const std::string name = conn->path() + ": calibrations/" + stored->id;
      const std::string source = "database " + conn->path() + " (latest for " + dev.name + ", stored " + stored->created_at + ")";
      return weigh({costmodel::predictor_from_document(stored->document, name, dev), dev, source}, evidence, false);
    }
    if (db_required)
      throw Error("--db: " + conn->path() + " holds no calibration for '" + dev.name +
                  "' (`layoutx calibrate --db " + conn->path() + "` stores one)");
  }
  // 3. The device's own files (refitted in memory when stale, said on stderr).
  costmodel::ShippedPredictor shipped = costmodel::shipped_predictor(dev, std::cerr);
  return weigh({std::move(shipped.predictor), dev, std::move(shipped.source)}, evidence, true);
}

db::DevicePredictions database_key_predictions(const std::string& calibration_file, db::Connection& conn) {
  auto loader = [calibration_file, &conn](const std::string& device) {
    LoadedPredictor p = load_predictor(device, calibration_file, &conn, false);
    return db::LoadedDevicePredictor{std::move(p.predictor), std::move(p.source)};
  };
  return db::DevicePredictions(loader, !calibration_file.empty());
}

}  // namespace layoutx::cli
