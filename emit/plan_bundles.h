// The job bundles of planned measurements (explorer/measurement_plan.h) in one folder: a bundle
// each, plan.yaml (explorer/plan_file.h) and submit_all.sh. `next --out` and `propose
// --settle-out` write them.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "emit/bundle.h"
#include "explorer/measurement_plan.h"
#include "model/model_spec.h"

namespace layoutx::emit {

struct PlanBundleEntry {
  const explorer::PlannedMeasurement* measurement = nullptr;  // not owned
  std::string name;     // its variant named relative to its model (the folder's name is made of it)
  std::string settles;  // what it settles, in words (plan.yaml)
};

// What one planned measurement became in the folder.
struct WrittenBundle {
  std::string dir;     // relative to the plan folder
  std::string submit;  // the command that runs it
  std::string ingest;  // what to do with what comes back
};

// Writes into `folder` (a staging folder: the caller publishes it). The bundles' sizes are checked
// against emit's cap before anything is written. Throws Error naming the file that failed.
std::vector<WrittenBundle> write_plan_bundles(const std::filesystem::path& folder,
                                              const std::vector<PlanBundleEntry>& entries, const model::ModelSpec& m,
                                              const std::string& device, const std::string& calibration_id,
                                              const BundleOptions& target, uint64_t seed);

}  // namespace layoutx::emit
