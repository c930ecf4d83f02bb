// The plan file of `layoutx next --out`: plan.yaml, the measurements that would most improve the
// open decisions, most valuable first, each with its job bundle's folder and the commands that
// submit it and ingest what comes back. Plain YAML (schema layoutx-plan/1) so a script can read
// it without layoutx; written with YAML::Emitter beside the layout file (explorer/layout_file.h).
#pragma once
#include <string>
#include <vector>

#include "explorer/measurement_plan.h"

namespace layoutx::explorer {

inline constexpr const char* kPlanSchema = "layoutx-plan/1";

// One planned measurement as the file spells it.
struct PlanFileEntry {
  const PlannedMeasurement* measurement = nullptr;  // kind, layer, variant, figures (not owned)
  std::string settles;  // what it settles, in words (the verb's text, hypotheses told apart included)
  std::string bundle;   // its job bundle's folder, relative to the plan folder
  std::string submit;   // the command that runs it
  std::string ingest;   // what to do with what comes back
};

struct PlanFile {
  std::string model;
  std::string device;
  std::string calibration_id;
  std::vector<PlanFileEntry> measurements;  // rank = position + 1
};

// The file's text: a comment header, then the fields. Figures with fixed decimals (predicted and
// value in ms: 6; P(choice changes): 4); strings that are sentences or commands double-quoted.
std::string plan_file_yaml(const PlanFile& f);

}  // namespace layoutx::explorer
