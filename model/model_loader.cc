// Placeholder until the loader lands (see issue #2): ships the Spark spec in code so the graph verb works.
#include "model/model_loader.h"
#include "support/error.h"
namespace layoutx::model {
ModelSpec load_model_yaml(const std::string& path) { throw Error(path + ": YAML loader not implemented yet"); }
ModelSpec load_model_yaml_text(const std::string&, const std::string& name) { throw Error(name + ": not implemented"); }
ModelSpec load_model(const std::string& path_or_name) {
  if (path_or_name != kDefaultModel) throw Error(path_or_name + ": not implemented");
  ModelSpec m; m.name = kDefaultModel; m.hidden = 2048; m.intermediate = 6656; m.heads = 8; m.kv_heads = 2;
  m.head_dim = 256; m.vocab = 131072; m.head_gate = true; m.sliding_window = 512;
  for (int i = 0; i < 28; ++i) m.layer_types.push_back((i + 1) % 4 == 0 ? LayerType::kFull : LayerType::kSliding);
  m.rope_sliding = {10000.0, 256}; m.rope_full = {5e6, 64};
  return m;
}
void set_model_field(ModelSpec&, const std::string& key, const std::string&) { throw Error(key + ": not implemented"); }
}  // namespace layoutx::model
