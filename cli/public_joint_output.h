// What `layoutx public --joint` prints of the joint calibration (explorer/public_joint.h): the
// terms' posteriors beside their priors, every record in-sample and left out, each publication
// left out, the hypotheses' weights before and after, summed per hypothesis axis.
#pragma once
#include <string>

#include "explorer/public_joint.h"

namespace layoutx::cli {

void print_public_joint(const explorer::PublicJoint& j, const std::string& chip, const std::string& source, bool json);

}  // namespace layoutx::cli
