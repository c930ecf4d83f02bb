// Calibrations kept in the database (`layoutx calibrate --db`): the whole saved calibration
// document (the YAML costmodel::save_calibration writes) is stored in calibrations.coefficients,
// so any verb can load the database's latest one with costmodel::parse_calibration.
#pragma once
#include <optional>
#include <string>

#include "db/sqlite.h"

namespace layoutx::db {

struct StoredCalibration {
  std::string id;          // the calibration's id (costmodel::Calibration::id)
  std::string device;
  std::string created_at;  // ISO-8601 UTC, when it was stored
  std::string document;    // the calibration file's text
  std::string provenance;  // what it was fitted on
};

// The device's most recently stored calibration, if any.
std::optional<StoredCalibration> latest_calibration(Connection& c, const std::string& device);

}  // namespace layoutx::db
