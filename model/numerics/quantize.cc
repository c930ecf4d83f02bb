#include "model/numerics/quantize.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>

#include "support/error.h"

namespace layoutx::model::numerics {

namespace {

// nearbyint(y) for |y| < 2^51, in the default rounding mode (to nearest, ties to even) as
// nearbyint itself: y + 1.5 2^52 lands where the ulp is 1, so the addition rounds y to an
// integer; the subtraction is exact. copysign keeps the sign of a zero result (-0.3 -> -0).
// Unlike a libm call this inlines and vectorizes. Codes here are at most 65535 in magnitude.
inline double round_even(double y) {
  constexpr double kMagic = 6755399441055744.0;  // 1.5 * 2^52
  return std::copysign((y + kMagic) - kMagic, y);
}

}  // namespace

Tensor<double> quantize_weight_per_channel(const Tensor<double>& w, int bits) {
  if (bits != 4 && bits != 8) throw Error("quantize: weight bits must be 4 or 8, got " + std::to_string(bits));
  if (w.shape.empty()) throw Error("quantize: a weight needs at least one axis");
  const int64_t cols = w.shape.back();
  const int64_t rows = w.size() / cols;
  const double qmax = double((1 << (bits - 1)) - 1);  // 127 or 7
  std::vector<double> scale(static_cast<size_t>(cols), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) scale[c] = std::max(scale[c], std::fabs(w[r * cols + c]));
  for (double& s : scale) s /= qmax;
  Tensor<double> q(w.shape);
  for (int64_t r = 0; r < rows; ++r) {
    const double* in = w.data.data() + r * cols;
    double* out = q.data.data() + r * cols;
    for (int64_t c = 0; c < cols; ++c) {
      const double s = scale[c];
      // |w / s| <= qmax up to rounding; a NaN weight gives NaN, as nearbyint would.
      out[c] = s > 0 ? std::clamp(round_even(in[c] / s), -qmax, qmax) * s : 0.0;
    }
  }
  return q;
}

const char* to_string(WeightQuantizer q) {
  switch (q) {
    case WeightQuantizer::kPerChannel: return "per-channel";
    case WeightQuantizer::kBlock32: return "block32";
    case WeightQuantizer::kBlock64: return "block64";
    case WeightQuantizer::kBlock16: return "block16";
  }
  return "?";
}

WeightQuantizer parse_weight_quantizer(const std::string& s, const std::string& what) {
  for (auto q : {WeightQuantizer::kPerChannel, WeightQuantizer::kBlock32, WeightQuantizer::kBlock64})
    if (s == to_string(q)) return q;
  throw Error(what + ": unknown quantizer '" + s + "' (allowed: per-channel, block32, block64)");
}

int block_size(WeightQuantizer q) {
  switch (q) {
    case WeightQuantizer::kPerChannel: return 0;
    case WeightQuantizer::kBlock32: return 32;
    case WeightQuantizer::kBlock64: return 64;
    case WeightQuantizer::kBlock16: return 16;
  }
  return 0;
}

WeightQuantizer quantizer_of_block(int block) {
  for (auto q : {WeightQuantizer::kPerChannel, WeightQuantizer::kBlock16, WeightQuantizer::kBlock32,
                 WeightQuantizer::kBlock64})
    if (block_size(q) == block) return q;
  throw Error("quantize: no block quantizer of " + std::to_string(block) + " rows (16, 32 or 64)");
}

namespace {

// The LPBQ step of every element (see quantize_weight_lpbq), written into `step`.
void lpbq_step_into(const Tensor<double>& w, int block, Tensor<double>& step) {
  if (block <= 0) throw Error("quantize: block size must be positive, got " + std::to_string(block));
  if (w.shape.empty()) throw Error("quantize: a weight needs at least one axis");
  const int64_t cols = w.shape.back();
  const int64_t rows = w.size() / cols;
  const int64_t blocks = (rows + block - 1) / block;
  constexpr double kQmax = 7, kLevels = 16;  // 4-bit codes; 4-bit block integer scales 1..16
  std::vector<double> s(static_cast<size_t>(blocks * cols), 0.0), per_channel(static_cast<size_t>(cols), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      double& m = s[(r / block) * cols + c];
      m = std::max(m, std::fabs(w[r * cols + c]));
    }
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t c = 0; c < cols; ++c) {
      double& sb = s[b * cols + c];
      sb /= kQmax;
      per_channel[c] = std::max(per_channel[c], sb / kLevels);
    }
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t c = 0; c < cols; ++c) {
      double& sb = s[b * cols + c];
      const double S = per_channel[c];
      // A relative 1e-12 keeps a block whose scale is exactly k S at k (not k + 1 from rounding).
      sb = S > 0 ? std::clamp(std::ceil(sb / S * (1 - 1e-12)), 1.0, kLevels) * S : 0.0;
    }
  step = Tensor<double>(w.shape);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) step[r * cols + c] = s[(r / block) * cols + c];
}

}  // namespace

Tensor<double> lpbq_steps(const Tensor<double>& w, int block) {
  Tensor<double> step;
  lpbq_step_into(w, block, step);
  return step;
}

Tensor<double> quantize_weight_lpbq(const Tensor<double>& w, int block) {
  Tensor<double> q;
  lpbq_step_into(w, block, q);
  for (int64_t i = 0; i < w.size(); ++i) {
    const double s = q[i];
    // k S >= the block's own scale, so |w / s| <= 7 up to rounding; a NaN weight gives NaN.
    q[i] = s > 0 ? std::clamp(round_even(w[i] / s), -8.0, 7.0) * s : 0.0;
  }
  return q;
}

Tensor<double> quantize_weight(const Tensor<double>& w, int bits, WeightQuantizer q) {
  if (bits == 4 && q != WeightQuantizer::kPerChannel) return quantize_weight_lpbq(w, block_size(q));
  return quantize_weight_per_channel(w, bits);
}

namespace {

// 16-byte vectors of T and of same-size integers (GCC vector extensions: elementwise operators,
// `?:` on a vector condition, casts between same-size vectors reinterpret the bits). The range
// scan below is written with them: GCC 12 does not vectorize min/max reductions on its own.
template <typename T>
struct Vec16;
template <>
struct Vec16<float> {
  typedef float V __attribute__((vector_size(16)));
  typedef uint32_t Bits __attribute__((vector_size(16)));
};
template <>
struct Vec16<double> {
  typedef double V __attribute__((vector_size(16)));
  typedef uint64_t Bits __attribute__((vector_size(16)));
};

// The range of x[0..n) together with 0 (lo <= 0 <= hi, in T), and per block of kZeroBlock
// elements whether all its bits are zero (all +0: an unwritten cache region, most of a short
// history's cache). One read of x.
// Converting to double is exact and monotonic, so min/max in T equal them in double.
// (b < a ? b : a) ignores a NaN b, as std::min/max did element by element, and never takes a
// -0 over +0, so independent lanes only ever hold values the sequential loop would: their
// min/max is its result.
template <typename T>
std::pair<T, T> range_and_zero_blocks(const T* x, size_t n, std::vector<uint8_t>& plus_zero) {
  using V = typename Vec16<T>::V;
  using Bits = typename Vec16<T>::Bits;
  using Scalar = std::remove_cvref_t<decltype(Bits{}[0])>;
  constexpr size_t kLanes = sizeof(V) / sizeof(T);
  V lo0 = {}, hi0 = {}, lo1 = {}, hi1 = {};  // two pairs: independent chains
  T lo = 0, hi = 0;                           // elements left over past whole pairs of vectors
  plus_zero.assign((n + kZeroBlock - 1) / kZeroBlock, 0);
  for (size_t b = 0; b < n; b += kZeroBlock) {
    const size_t end = std::min(n, b + kZeroBlock);
    Bits bits = {};
    Scalar tail_bits = 0;
    size_t i = b;
    for (; i + 2 * kLanes <= end; i += 2 * kLanes) {
      V u, v;
      std::memcpy(&u, x + i, sizeof u);  // unaligned loads
      std::memcpy(&v, x + i + kLanes, sizeof v);
      lo0 = u < lo0 ? u : lo0;
      hi0 = hi0 < u ? u : hi0;
      lo1 = v < lo1 ? v : lo1;
      hi1 = hi1 < v ? v : hi1;
      bits |= (Bits)u | (Bits)v;
    }
    for (; i < end; ++i) {
      lo = x[i] < lo ? x[i] : lo;
      hi = hi < x[i] ? x[i] : hi;
      tail_bits |= std::bit_cast<Scalar>(x[i]);
    }
    for (size_t j = 0; j < kLanes; ++j) tail_bits |= bits[j];
    plus_zero[b / kZeroBlock] = tail_bits == 0;
  }
  for (size_t j = 0; j < kLanes; ++j) {
    lo = lo0[j] < lo ? lo0[j] : lo;
    lo = lo1[j] < lo ? lo1[j] : lo;
    hi = hi < hi0[j] ? hi0[j] : hi;
    hi = hi < hi1[j] ? hi1[j] : hi;
  }
  return {lo, hi};
}

}  // namespace

template <typename T>
void quantize_u16(const T* src, T* dst, size_t n) {
  if (n == 0) return;
  std::vector<uint8_t> plus_zero;
  const auto [lo_t, hi_t] = range_and_zero_blocks(src, n, plus_zero);
  const double lo = lo_t, hi = hi_t;
  if (!(hi > lo) || !std::isfinite(hi - lo)) {  // all zero, or non-finite: nothing a code could hold
    if (src != dst) std::copy_n(src, n, dst);
    return;
  }
  const double scale = (hi - lo) / 65535.0;
  const double offset = std::nearbyint(-lo / scale);
  for (size_t b = 0; b < n;) {
    // A run of +0 blocks stays +0 (x = ±0 gives code = offset, and (offset - offset) * scale =
    // +0): in place there is nothing to write, else one fill.
    if (plus_zero[b / kZeroBlock]) {
      size_t e = b;
      while (e < n && plus_zero[e / kZeroBlock]) e += kZeroBlock;
      e = std::min(e, n);
      if (src != dst) std::fill(dst + b, dst + e, T(0));
      b = e;
      continue;
    }
    const size_t e = std::min(n, b + kZeroBlock);
    for (size_t i = b; i < e; ++i) {
      // Finite or NaN here; a NaN code stays NaN through the clamp.
      const double code = std::clamp(round_even(double(src[i]) / scale) + offset, 0.0, 65535.0);
      dst[i] = static_cast<T>((code - offset) * scale);
    }
    b = e;
  }
}

template <typename T>
void quantize_u16_in_place(std::vector<T>& x) {
  quantize_u16(x.data(), x.data(), x.size());
}

template <typename T>
U16Range u16_range(const T* x, size_t n) {
  std::vector<uint8_t> plus_zero;
  const auto [lo, hi] = range_and_zero_blocks(x, n, plus_zero);
  return {double(lo), double(hi)};
}

template <typename T>
void quantize_u16_with_range(const T* src, T* dst, size_t n, U16Range range) {
  const double lo = std::min(range.lo, 0.0), hi = std::max(range.hi, 0.0);
  if (!(hi > lo) || !std::isfinite(hi - lo)) {
    if (src != dst) std::copy_n(src, n, dst);
    return;
  }
  const double scale = (hi - lo) / 65535.0;
  const double offset = std::nearbyint(-lo / scale);
  const double inv = 1.0 / scale;
  // One pass, no range scan: +-0 gives code = offset and comes back +0, so a block of zeros
  // (an unwritten cache region) is skipped in place or filled. x * inv may differ from x / scale
  // in the last bit, which moves a code only at an exact tie (a change of one code).
  for (size_t b = 0; b < n; b += kZeroBlock) {
    const size_t e = std::min(n, b + kZeroBlock);
    if (all_zero(src + b, e - b)) {
      if (src != dst) std::fill(dst + b, dst + e, T(0));
      else
        for (size_t i = b; i < e; ++i) dst[i] = T(0);  // -0 becomes +0, as its code says
      continue;
    }
    for (size_t i = b; i < e; ++i) {
      const double code = std::clamp(round_even(double(src[i]) * inv) + offset, 0.0, 65535.0);
      dst[i] = static_cast<T>((code - offset) * scale);
    }
  }
}

template <typename T>
void quantize_u8_symmetric(const T* src, T* dst, size_t n, const U16Range* range) {
  const U16Range r = range ? *range : u16_range(src, n);
  const double a = std::max(std::abs(r.lo), std::abs(r.hi));
  if (!(a > 0) || !std::isfinite(a)) {
    if (src != dst) std::copy_n(src, n, dst);
    return;
  }
  // The scale as float32 stores it (ONNX's QuantizeLinear scale, the device's encoding).
  const double scale = static_cast<float>(a / 127.0);
  for (size_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(src[i]);
    if (std::isnan(x)) {
      dst[i] = src[i];
      continue;
    }
    const double code = std::clamp(std::nearbyint(x / scale), -128.0, 127.0);  // uint8 codes 0..255 less 128
    dst[i] = static_cast<T>(code * scale);
  }
}

template void quantize_u8_symmetric<float>(const float*, float*, size_t, const U16Range*);
template void quantize_u8_symmetric<double>(const double*, double*, size_t, const U16Range*);
template void quantize_u16<float>(const float*, float*, size_t);
template void quantize_u16<double>(const double*, double*, size_t);
template void quantize_u16_in_place<float>(std::vector<float>&);
template void quantize_u16_in_place<double>(std::vector<double>&);
template U16Range u16_range<float>(const float*, size_t);
template U16Range u16_range<double>(const double*, size_t);
template void quantize_u16_with_range<float>(const float*, float*, size_t, U16Range);
template void quantize_u16_with_range<double>(const double*, double*, size_t, U16Range);

}  // namespace layoutx::model::numerics
