// Reading a YAML/JSON list of layer-type words (ours: sliding / full; HF: sliding_attention /
// full_attention), shared by the model loader and the HF importer.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "model/model_spec.h"
#include "support/yaml_reader.h"

namespace layoutx::model {

// `list` is the value of `key` in the map `r` reads. Reports a non-list, and every entry that is
// neither word, to `errors` (file:line:col, key path with the index); returns nullopt if any.
std::optional<std::vector<LayerType>> read_layer_type_list(MapReader& r, const YAML::Node& list,
                                                           const std::string& key, const std::string& sliding_word,
                                                           const std::string& full_word, ErrorList& errors);

}  // namespace layoutx::model
