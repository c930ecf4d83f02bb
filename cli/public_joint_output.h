// What `layoutx public --joint` prints of the joint calibration (explorer/public_joint.h): the
// terms' posteriors beside their priors, every record in-sample and left out, each publication
// left out, the hypotheses' weights before and after, summed per hypothesis axis.
#pragma once
#include <string>

#include "costmodel/calibration_report.h"
#include "explorer/public_joint.h"
#include "support/json_writer.h"

namespace layoutx::cli {

void print_public_joint(const explorer::PublicJoint& j, const std::string& chip, const std::string& source, bool json);
// The same as fields of an open JSON object.
void write_public_joint_json(JsonWriter& w, const explorer::PublicJoint& j, const std::string& source);

// `calibrate --evidence all`: the team's timings under the team's weights and under the joint ones
// (the combined mixture's in-sample residuals and held-out errors).
void print_team_fit_both_ways(const costmodel::HypothesisReport& team, const costmodel::HypothesisReport& joint,
                              std::ostream& out);
void write_team_fit_both_ways(JsonWriter& w, const costmodel::HypothesisReport& team,
                              const costmodel::HypothesisReport& joint);

}  // namespace layoutx::cli
