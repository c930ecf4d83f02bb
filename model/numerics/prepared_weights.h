// Weights as an executor computes with them: converted to its arithmetic type T and, when the
// precision is simulated, stored in the dtype the graph gives each one (per-channel i8/i4,
// f16 rounding, u16 from the tensor's own range). Prepared once per (role, dtype, quantizer of
// 4-bit weights) and shared by
// every executor built from the same PreparedWeights: the explorer's fidelity figure runs many
// variants of one layer over one set of weights.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>

#include "model/graph.h"
#include "model/numerics/quantize.h"
#include "model/numerics/tensor.h"
#include "model/numerics/weights.h"

namespace layoutx::model::numerics {

template <typename T>
class PreparedWeights {
 public:
  // `weights` must outlive this object.
  PreparedWeights(const LayerWeights& weights, bool simulate_precision)
      : weights_(weights), simulate_precision_(simulate_precision) {}

  const LayerWeights& source() const { return weights_; }
  bool simulate_precision() const { return simulate_precision_; }
  // The weight of `role` stored as `dtype` (without simulation, just converted to T), an i4
  // weight quantized by `quantizer`; prepared on first request, then the same tensor (the
  // reference stays valid as long as this object). Thread-safe. Throws std::out_of_range if the
  // role has no weight (callers check first).
  const Tensor<T>& get(Role role, DType dtype, WeightQuantizer quantizer = kDefaultW4Quantizer);

 private:
  const LayerWeights& weights_;
  bool simulate_precision_;
  std::mutex mu_;
  std::map<std::tuple<Role, DType, WeightQuantizer>, std::unique_ptr<const Tensor<T>>> prepared_;
};

extern template class PreparedWeights<float>;
extern template class PreparedWeights<double>;

}  // namespace layoutx::model::numerics
