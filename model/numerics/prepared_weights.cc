#include "model/numerics/prepared_weights.h"

#include "model/numerics/float16.h"
#include "model/numerics/quantize.h"

namespace layoutx::model::numerics {

namespace {

// Stored in `dtype`, computed in double, then converted to T.
template <typename T>
Tensor<T> prepare(const Tensor<double>& w, DType dtype, bool simulate, WeightQuantizer quantizer) {
  if (!simulate) return w.template cast<T>();
  switch (dtype) {
    case DType::kI8: return quantize_weight_per_channel(w, 8).template cast<T>();
    case DType::kI4: return quantize_weight(w, 4, quantizer).template cast<T>();
    case DType::kF16: {
      Tensor<double> r(w.shape);
      round_to_half(w.data.data(), r.data.data(), w.data.size());
      return r.template cast<T>();
    }
    case DType::kU16: {
      Tensor<double> r(w.shape);
      quantize_u16(w.data.data(), r.data.data(), w.data.size());
      return r.template cast<T>();
    }
    case DType::kU8:  // a K/V cache dtype, never a weight's
    case DType::kF32:
    case DType::kI32: break;
  }
  return w.template cast<T>();
}

}  // namespace

template <typename T>
const Tensor<T>& PreparedWeights<T>::get(Role role, DType dtype, WeightQuantizer quantizer) {
  if (!simulate_precision_) dtype = DType::kF32;  // one conversion serves every dtype
  if (dtype != DType::kI4) quantizer = WeightQuantizer::kPerChannel;  // only 4-bit weights differ
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = prepared_[{role, dtype, quantizer}];
  if (!slot)
    slot = std::make_unique<const Tensor<T>>(prepare<T>(weights_.at(role), dtype, simulate_precision_, quantizer));
  return *slot;
}

template class PreparedWeights<float>;
template class PreparedWeights<double>;

}  // namespace layoutx::model::numerics
