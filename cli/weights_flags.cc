#include "cli/weights_flags.h"

#include "cli/flag_checks.h"
#include "model/limits.h"
#include "model/numerics/safetensors.h"
#include "support/error.h"
#include "support/paths.h"

namespace layoutx::cli {

void WeightsFlags::add_to(CLI::App& verb) {
  verb.add_option("--weights", weights, "a safetensors checkpoint to take the layer's weights from");
  verb.add_option("--weight-map", weight_map, "tensor names by role (default configs/models/<model>.weights.yaml)");
  verb.add_option("--layer-index", layer_index, "which layer of the checkpoint, with --weights (default: the first of the type)")
      ->check(integer_in(0, model::limits::kMaxLayers - 1));
}

void WeightsFlags::check() const {
  if (layer_index >= 0 && weights.empty()) throw Error("--layer-index needs --weights");
}

WeightsFlags::Source WeightsFlags::resolve(const model::ModelSpec& m, model::LayerType type) const {
  check();
  Source s;
  s.checkpoint = weights;
  s.map_path = weight_map.empty() ? config_path("models/" + m.name + ".weights.yaml") : weight_map;
  if (layer_index < 0) {
    const std::vector<int> of_type = m.layers_of(type);
    if (of_type.empty()) throw Error("--weights: " + m.name + " has no " + model::to_string(type) + " layer");
    s.layer_index = of_type.front();
  } else {
    if (layer_index >= m.num_layers() || m.layer_types[layer_index] != type)
      throw Error("--layer-index " + std::to_string(layer_index) + ": not a " + model::to_string(type) + " layer of " +
                  m.name);
    s.layer_index = layer_index;
  }
  return s;
}

model::numerics::LayerWeights WeightsFlags::load(const Source& s, const model::LayerSpec& layer) {
  namespace num = model::numerics;
  return num::load_layer_weights(num::SafetensorsFile(s.checkpoint), num::load_weight_map(s.map_path), layer,
                                 s.layer_index);
}

}  // namespace layoutx::cli
