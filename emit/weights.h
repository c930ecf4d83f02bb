// Where an emitted graph's weights come from. The writer asks a WeightSource for each Weight
// vertex by role and shape; the ONNX initializers and the reference executor use the same data.
//
// SeededWeights is a stop-gap: issue #3 (model/numerics/) is writing the project's seeded
// generator and a safetensors reader; once they land, emit uses theirs and this file goes.
#pragma once
#include <cstdint>
#include <vector>

#include "model/graph.h"

namespace layoutx::emit {

class WeightSource {
 public:
  virtual ~WeightSource() = default;
  // Row-major float32 data of the weight of `role` with `shape` (graph.h's transposed layouts).
  virtual std::vector<float> tensor(model::Role role, const model::Shape& shape) const = 0;
};

// Deterministic weights of realistic scale: projections ~ N(0, 1/fan_in) (fan_in = the first
// dimension of the transposed [in, out] layout, so activations keep unit scale, as trained
// checkpoints roughly do: 1/sqrt(2048) = 0.022 vs HF's 0.02 init); norm weights 1 + N(0, 0.05^2).
// Each role draws from its own stream, so a tensor does not depend on which others exist.
class SeededWeights : public WeightSource {
 public:
  explicit SeededWeights(uint64_t seed) : seed_(seed) {}
  std::vector<float> tensor(model::Role role, const model::Shape& shape) const override;

 private:
  uint64_t seed_;
};

// A small deterministic normal generator (splitmix64 + Box-Muller), identical on every
// platform, for weights and synthetic inputs.
class NormalStream {
 public:
  explicit NormalStream(uint64_t seed) : state_(seed) {}
  double next();  // N(0, 1)

 private:
  uint64_t bits();
  double uniform();  // (0, 1)
  uint64_t state_;
  bool has_spare_ = false;
  double spare_ = 0.0;
};

// Mixes a seed with a small integer tag into an independent stream seed.
uint64_t stream_seed(uint64_t seed, uint64_t tag);

}  // namespace layoutx::emit
