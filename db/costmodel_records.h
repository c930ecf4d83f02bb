// The database's layer timings of one device as the cost model's calibration records
// (costmodel::MeasurementRecord), for `layoutx calibrate --db`: files and database together.
#pragma once
#include <string>
#include <vector>

#include "costmodel/measurements.h"
#include "db/sqlite.h"

namespace layoutx::db {

// Relative standard deviation given to a timing from the database: the shipped measurement
// file's noise.timing_rel_sd (AI Hub profiles of one graph repeat within a few percent).
inline constexpr double kDbTimingRelSd = 0.02;

// Layer timings of `device` whose boundary the cost model is calibrated on (ours, aihub_estimate),
// skipping runs whose content hash equals a file in `files_in_use` (a file given to calibrate
// and also ingested is counted once) and zero times. Record ids read "db:<run>/<measurement>".
std::vector<costmodel::MeasurementRecord> costmodel_records(Connection& c, const std::string& device,
                                                            const std::vector<std::string>& files_in_use);

}  // namespace layoutx::db
