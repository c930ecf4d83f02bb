// Quantization as the quantized graphs (w8a16, w4a16) store tensors, simulated in floating
// point: a value is replaced by the value its integer code stands for.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "model/numerics/tensor.h"

namespace layoutx::model::numerics {

// Per-channel symmetric weight quantization of a [in, out] projection weight (channel = output
// column, the last axis): scale_c = max|w[:,c]| / (2^(bits-1) - 1), code = round(w / scale_c)
// clamped to [-(2^(bits-1) - 1), 2^(bits-1) - 1]; returns code * scale_c. bits: 4 or 8.
Tensor<double> quantize_weight_per_channel(const Tensor<double>& w, int bits);

// How 4-bit weights are quantized: a choice of the question (what the exporter will run), not a
// layout axis. 8-bit weights are always per-channel symmetric (what QNN and AI Hub ship for
// w8a16).
//   kPerChannel: quantize_weight_per_channel(w, 4).
//   kBlock32 / kBlock64: QNN's low-power block-wise form (LPBQ): per output channel, blocks of
//     32 / 64 rows along the input axis, each block's scale = a per-channel float scale times a
//     4-bit unsigned integer (quantize_weight_lpbq).
//   kBlock16: the same with blocks of 16 (weight_quant=block16; not a --quantizer value).
enum class WeightQuantizer { kPerChannel, kBlock32, kBlock64, kBlock16 };
// The default for w4a16: LPBQ with block 64. Qualcomm's public LLM recipes for the HTP quantize
// 4-bit weights block-wise with block 64 in the LPBQ form (AIMET
// set_grouped_blockwise_quantization_for_weights(bitwidth=4, decompressed_bw=8, block_size=64));
// per-channel 4-bit is the older, coarser fallback (htp-facts.md: LPBQ needs v69+, the S25 is
// v79).
inline constexpr WeightQuantizer kDefaultW4Quantizer = WeightQuantizer::kBlock64;
const char* to_string(WeightQuantizer q);
using model::to_string;  // the overload above must not hide model's (Shape, DType, ...)
// "per-channel", "block32", "block64"; throws Error naming `what` (e.g. the flag) otherwise.
WeightQuantizer parse_weight_quantizer(const std::string& s, const std::string& what);
int block_size(WeightQuantizer q);  // 0 for per-channel
// The quantizer of a block size (0: per-channel; 16, 32, 64); throws Error otherwise.
WeightQuantizer quantizer_of_block(int block);


// LPBQ of a [in, out] weight with 4-bit codes, simulated in floating point. Per output column c
// and block b of `block` rows (the last block shorter if `block` does not divide in):
//   s_cb = max|w[block, c]| / 7                        (the block's own min-max scale)
//   S_c  = max_b s_cb / 16                             (the per-channel float scale)
//   k_cb = clamp(ceil(s_cb / S_c), 1, 16)              (the block's 4-bit integer scale, 1..16)
//   code = clamp(round(w / (k_cb S_c)), -8, 7), w becomes code k_cb S_c.
// k_cb S_c >= s_cb, so nothing is clipped and every element is within half its block's step of
// its value. Approximated: AIMET computes the block integer scale by rounding (which may clip a
// block's largest weight by up to half a step) and AI Hub may search encodings by MSE (SeqMSE);
// this is the plain min-max encoding, and the float scale is kept in double (fp32 on device).
Tensor<double> quantize_weight_lpbq(const Tensor<double>& w, int block);
// The effective per-element scale (step) quantize_weight_lpbq uses, same shape as w: for tests
// and the error bound.
Tensor<double> lpbq_steps(const Tensor<double>& w, int block);
// bits 8: per channel always; bits 4: by the quantizer.
Tensor<double> quantize_weight(const Tensor<double>& w, int bits, WeightQuantizer q);

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

// A tensor's static uint16 range, as calibration fixes it: lo <= 0 <= hi.
struct U16Range {
  double lo = 0, hi = 0;
  void extend(double x) {
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
};
// The range of x[0..n) together with 0 (NaNs ignored; infinities widen it).
template <typename T>
U16Range u16_range(const T* x, size_t n);
// Affine uint16 encoding with a given (calibrated) range: scale = (hi - lo) / 65535, offset =
// round(-lo / scale), code = clamp(round(x / scale) + offset, 0, 65535), x becomes
// (code - offset) * scale: values outside the range are clipped to its ends, as a static
// encoding does on device. An empty or non-finite range leaves the values as they are.
template <typename T>
void quantize_u16_with_range(const T* src, T* dst, size_t n, U16Range range);

// Symmetric 8-bit encoding of a K/V cache tensor (kv_dtype=u8): uint8 with offset 128,
// scale = a / 127 with a = max(|lo|, |hi|) of `range` (the tensor's own when null), code =
// clamp(round(x / scale), -128, 127) + 128 (round half to even, saturating to 0..255 as ONNX's
// QuantizeLinear does); x becomes (code - 128) * scale. The cache input and
// the new entry's output share one encoding (tied), so the runtime copies codes. An empty or
// non-finite range leaves the values as they are.
template <typename T>
void quantize_u8_symmetric(const T* src, T* dst, size_t n, const U16Range* range);

}  // namespace layoutx::model::numerics
