#include "model/layer_type_list.h"

namespace layoutx::model {

std::optional<std::vector<LayerType>> read_layer_type_list(MapReader& r, const YAML::Node& list,
                                                           const std::string& key, const std::string& sliding_word,
                                                           const std::string& full_word, ErrorList& errors) {
  if (!list.IsSequence()) {
    r.error(key, "must be a list of " + sliding_word + " / " + full_word + ", got " +
                     (list.IsScalar() ? "'" + list.Scalar() + "'" : std::string("a mapping")));
    return std::nullopt;
  }
  std::vector<LayerType> types;
  bool ok = true;
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node e = list[i];
    if (e.IsScalar() && e.Scalar() == sliding_word) {
      types.push_back(LayerType::kSliding);
    } else if (e.IsScalar() && e.Scalar() == full_word) {
      types.push_back(LayerType::kFull);
    } else {
      errors.add(where(r.file(), e) + ": " + r.key_path(key) + "[" + std::to_string(i) + "]: must be " + sliding_word +
                 " or " + full_word + ", got " + (e.IsScalar() ? "'" + e.Scalar() + "'" : std::string("a collection")));
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return types;
}

}  // namespace layoutx::model
