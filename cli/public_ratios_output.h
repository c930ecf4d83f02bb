// What `layoutx public --ratios` prints (explorer/public_shapes.h): each source's per-graph timings
// over its reference record, published beside predicted, with the members' spread.
#pragma once
#include <string>
#include <vector>

#include "explorer/public_shapes.h"

namespace layoutx::cli {

void print_public_ratios(const std::vector<explorer::ShapeSet>& sets, const std::string& chip, const std::string& source,
                         bool json);

}  // namespace layoutx::cli
