// The probes of a device (`probes:` in configs/devices/*.yaml): variants nobody measured in the
// device's data that `layoutx calibrate` predicts under each hypothesis, beside the fit, to show
// where the hypotheses disagree. Data, not code: a device lists its own (the CPU lists none, and
// calibrate then prints no probe table).
#pragma once
#include <string>
#include <vector>

#include "model/model_spec.h"
#include "model/variant.h"
#include "support/error.h"

namespace YAML {
class Node;
}

namespace layoutx::costmodel {

struct ProbeSpec {
  std::string label;  // the column's name, e.g. "sliding ring fp16"
  std::string model;  // a model name (configs/models/) or file, as --model takes it
  model::LayerType layer = model::LayerType::kSliding;
  int context = 0;  // tokens
  model::Variant variant;
  bool cache_in_u16 = false;  // the K/V cache enters in 16-bit fixed point (model/graph_transforms.h)
  std::string where;          // file:line:col of its entry, for messages
};

// Parses the `probes:` list (absent or null: none). Problems go to `errors` as
// "file:line:col: probes[i].key: what".
std::vector<ProbeSpec> parse_probes(const std::string& file, const YAML::Node& node, ErrorList& errors);

}  // namespace layoutx::costmodel
