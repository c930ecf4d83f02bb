#include "emit/weights.h"

#include "support/error.h"

namespace layoutx::emit {

std::vector<float> LayerWeightsSource::tensor(model::Role role, const model::Shape& shape) const {
  auto it = w_.find(role);
  if (it == w_.end()) throw Error(std::string("weights: no tensor for '") + model::role_name(role) + "'");
  if (it->second.shape != shape)
    throw Error(std::string("weights: '") + model::role_name(role) + "' is " + model::to_string(it->second.shape) +
                ", the graph needs " + model::to_string(shape));
  return std::vector<float>(it->second.data.begin(), it->second.data.end());
}

}  // namespace layoutx::emit
