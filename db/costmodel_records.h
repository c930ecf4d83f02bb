// The database's layer timings of one device as the cost model's calibration records, for
// `layoutx calibrate --db`: files and database together. The repeats of one graph are reduced
// in SQL (count, mean, sum of squares per graph), so the fit sees one row per measured graph
// whatever the number of measurements (costmodel/repeated_timings.h says why).
#pragma once
#include <string>
#include <vector>

#include "costmodel/op_profile_shares.h"
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

// Op shares from the device's stored per-op profiles (op_measurements with a time, tied to the
// layer timing of their run: AI Hub's execution_detail), under the same boundary and
// files-in-use rules as costmodel_timings: one share per cost class and run
// (costmodel/op_profile_shares.h). Per-op cycles alone (qnn-profile-viewer) are not used: cycles
// are summed over threads, so their ratios are not shares of wall time. Ids read
// "db-op:<run id>:<class>". `unmatched` (if given) collects "run N: <op name>" for each profile row
// no lowered op of its graph matches.
std::vector<costmodel::MeasurementRecord> costmodel_op_shares(Connection& c, const std::string& device,
                                                               const std::vector<std::string>& boundaries,
                                                               const std::vector<std::string>& files_in_use,
                                                               std::vector<std::string>* unmatched = nullptr);

// What a fit on files and this database sees: `records` (from files) with the database's timings
// combined in (costmodel::combine_repeated_timings) and its op shares appended, under the rules
// above. `calibrate --db` and the simulated loop both read the database through this.
std::vector<costmodel::MeasurementRecord> with_database_records(Connection& c, const std::string& device,
                                                                const std::vector<std::string>& boundaries,
                                                                const std::vector<std::string>& files_in_use,
                                                                const std::vector<costmodel::MeasurementRecord>& records,
                                                                std::vector<std::string>* unmatched = nullptr);

}  // namespace layoutx::db
