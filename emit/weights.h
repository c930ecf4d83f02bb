// Where an emitted graph's weights come from. The writer asks a WeightSource for each Weight
// vertex by role and shape. LayerWeightsSource serves model/numerics' LayerWeights, seeded
// (numerics::seeded_weights) or read from a safetensors checkpoint
// (numerics::load_layer_weights), so the ONNX initializers and the reference executor see the
// same values (rounded to float32).
#pragma once
#include <vector>

#include "model/graph.h"
#include "model/numerics/weights.h"

namespace layoutx::emit {

class WeightSource {
 public:
  virtual ~WeightSource() = default;
  // Row-major float32 data of the weight of `role` with `shape` (graph.h's transposed layouts).
  virtual std::vector<float> tensor(model::Role role, const model::Shape& shape) const = 0;
};

class LayerWeightsSource : public WeightSource {
 public:
  // Keeps a reference: `w` must outlive the source.
  explicit LayerWeightsSource(const model::numerics::LayerWeights& w) : w_(w) {}
  // Throws Error naming the role if it is missing or its shape is not `shape`.
  std::vector<float> tensor(model::Role role, const model::Shape& shape) const override;

 private:
  const model::numerics::LayerWeights& w_;
};

}  // namespace layoutx::emit
