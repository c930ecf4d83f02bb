#include "cli/calibration_source.h"

#include <iostream>

#include "costmodel/predictor_factory.h"
#include "db/stored_calibration.h"
#include "support/error.h"

namespace layoutx::cli {

LoadedPredictor load_predictor(const std::string& device, const std::string& calibration_file, db::Connection* conn,
                               bool db_required) {
  costmodel::DeviceSpec dev = costmodel::load_device_named(device);
  // 1. A calibration file, whatever it holds (one calibration or a hypotheses document): used as
  //    it is (it was fitted on whatever it names; not refitted).
  if (!calibration_file.empty())
    return {costmodel::predictor_from_file(calibration_file, dev), dev, "file " + calibration_file};
  // 2. The database's latest calibration of the device.
  if (conn) {
    if (auto stored = db::latest_calibration(*conn, dev.name)) {
      const std::string name = conn->path() + ": calibrations/" + stored->id;
      const std::string source = "database " + conn->path() + " (latest for " + dev.name + ", stored " + stored->created_at + ")";
      return {costmodel::predictor_from_document(stored->document, name, dev), dev, source};
    }
    if (db_required)
      throw Error("--db: " + conn->path() + " holds no calibration for '" + dev.name +
                  "' (`layoutx calibrate --db " + conn->path() + "` stores one)");
  }
  // 3. The device's own files (refitted in memory when stale, said on stderr).
  costmodel::ShippedPredictor shipped = costmodel::shipped_predictor(dev, std::cerr);
  return {std::move(shipped.predictor), dev, std::move(shipped.source)};
}

}  // namespace layoutx::cli
