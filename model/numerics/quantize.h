// Quantization as the quantized graphs (w8a16, w4a16) store tensors, simulated in floating
// point: a value is replaced by the value its integer code stands for.
#pragma once
#include <cstddef>
#include <cstdint>

#include "model/numerics/tensor.h"

namespace layoutx::model::numerics {

// Per-channel symmetric weight quantization of a [in, out] projection weight (channel = output
// column, the last axis): scale_c = max|w[:,c]| / (2^(bits-1) - 1), code = round(w / scale_c)
// clamped to [-(2^(bits-1) - 1), 2^(bits-1) - 1]; returns code * scale_c. bits: 4 or 8.
Tensor<double> quantize_weight_per_channel(const Tensor<double>& w, int bits);

// Affine uint16 encoding of one tensor from its range: [lo, hi] = [min(0, min x), max(0, max x)]
// (zero exactly representable), scale = (hi - lo) / 65535, offset = round(-lo / scale),
// code = clamp(round(x / scale) + offset, 0, 65535); x becomes (code - offset) * scale.
// The range is the tensor's own at this step (a per-step calibration: optimistic against a
// static calibration, which would also clip outliers). NaNs do not widen the range and stay
// NaN; an infinite value leaves the tensor as it is.
template <typename T>
void quantize_u16_in_place(std::vector<T>& x);
// The same from src[0..n) into dst[0..n) (src == dst allowed), in one read of src for the
// range and one pass for the codes.
template <typename T>
void quantize_u16(const T* src, T* dst, size_t n);

}  // namespace layoutx::model::numerics
