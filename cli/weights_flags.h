// The flags that take one layer's weights from a checkpoint instead of seeded ones (emit, parity):
// --weights CKPT.safetensors, --weight-map MAP.yaml, --layer-index I, under one rule:
//   - --layer-index I is an integer in [0, kMaxLayers) (checked when parsed) and needs --weights;
//   - with --weights and no --layer-index, the layer is the model's first of the type;
//   - I must be a layer of the type in the model ("--layer-index 3: not a sliding layer of M").
// Errors name the flag (exit 2).
#pragma once
#include <CLI/CLI.hpp>

#include <string>

#include "model/model_spec.h"
#include "model/numerics/weights.h"

namespace layoutx::cli {

struct WeightsFlags {
  std::string weights;     // --weights: a safetensors checkpoint; "" = seeded weights
  std::string weight_map;  // --weight-map; "" = configs/models/<model>.weights.yaml
  int layer_index = -1;    // --layer-index; -1 = not given

  // Registers --weights, --weight-map, --layer-index on a verb.
  void add_to(CLI::App& verb);
  // Before any work: the flags that need another (--layer-index without --weights). Throws Error.
  void check() const;

  // Where one layer's weights come from, resolved by the rule above.
  struct Source {
    std::string checkpoint;  // the --weights file
    std::string map_path;    // the weight map read
    int layer_index = 0;     // the checkpoint's layer
  };
  // For a layer of `type` in `m` (--weights given). Throws Error naming --layer-index.
  Source resolve(const model::ModelSpec& m, model::LayerType type) const;
  // That layer's tensors, read through the weight map for `layer` (a layer of `m`).
  static model::numerics::LayerWeights load(const Source& s, const model::LayerSpec& layer);
};

}  // namespace layoutx::cli
