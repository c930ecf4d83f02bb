// The database's layer timings of one device as the cost model's calibration records, for
// `layoutx calibrate --db`: files and database together. The repeats of one graph are reduced
// in SQL (count, mean, sum of squares per graph), so the fit sees one row per measured graph
// whatever the number of measurements (costmodel/repeated_timings.h says why).
#pragma once
#include <string>
#include <vector>

#include "costmodel/repeated_timings.h"
#include "db/sqlite.h"

namespace layoutx::db {

// Relative standard deviation given to a timing from the database: the shipped measurement
// file's noise.timing_rel_sd (AI Hub profiles of one graph repeat within a few percent).
inline constexpr double kDbTimingRelSd = 0.02;

// Layer timings of `device` whose boundary is one of `boundaries` (the device spec's: which profile
// timing is the layer's), one per (model, layer, ctx, cache entries, variant), skipping runs whose content hash equals a
// file in `files_in_use` (a file given to calibrate and also ingested is counted once). Record
// ids read "db:<first measurement id>" and sources name the database and the count.
std::vector<costmodel::RepeatedTiming> costmodel_timings(Connection& c, const std::string& device,
                                                         const std::vector<std::string>& boundaries,
                                                         const std::vector<std::string>& files_in_use);

}  // namespace layoutx::db
