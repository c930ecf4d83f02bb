// Parsing per-layer-type layouts from flags: --layout sliding=roll,full=ring (a value may be a
// preset or a variant key, whose own commas are kept) and --set TYPE.axis=value.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "explorer/composition.h"
#include "model/model_spec.h"

namespace layoutx::cli {

// Starts from the incumbent of each layer type the model has, applies --layout entries, then
// --set TYPE.axis=value, then the precision. Throws Error naming the flag and what is wrong
// (unknown layer type, a type the model does not have, unknown axis or value).
explorer::Assignment parse_assignment(const model::ModelSpec& m, model::Precision p,
                                      const std::vector<std::string>& layouts,
                                      const std::vector<std::string>& sets);

// The layer types --layout and --set name (the others keep parse_assignment's incumbent).
std::set<model::LayerType> named_types(const model::ModelSpec& m, const std::vector<std::string>& layouts,
                                       const std::vector<std::string>& sets);

// Splits "TYPE.axis=value" into its parts; checks the type exists in the model.
struct TypedSet {
  model::LayerType type;
  std::string axis, value;
};
TypedSet parse_typed_set(const model::ModelSpec& m, const std::string& s);

}  // namespace layoutx::cli
