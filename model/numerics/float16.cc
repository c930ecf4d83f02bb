#include "model/numerics/float16.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <type_traits>

#include "model/numerics/tensor.h"

namespace layoutx::model::numerics {

namespace {
constexpr double kMinNormal = 6.103515625e-05;        // 2^-14
constexpr double kSubnormalStep = 5.9604644775390625e-08;  // 2^-24

// Rounding works on the magnitude's bit pattern: a float16 normal keeps 10 mantissa bits, so
// rounding to nearest even clears the low (mantissa bits - 10) bits after adding half of that
// quantum minus one, plus the kept lowest bit (a tie then carries only from an odd mantissa; a
// carry out of the mantissa steps the exponent, which is the right answer). Below 2^-14 the
// quantum is the fixed 2^-24: adding and subtracting a power of two whose ulp is 2^-24 rounds
// to it (to nearest even in the default rounding mode, the mode nearbyint also obeys).
// From 65520 (halfway between 65504, the largest finite, and 2^16; ties go to even = inf) up,
// the result is infinity; NaN and infinity are returned as they are. Every case is computed
// and one selected, without branches, so a loop over an array vectorizes.
// T: float or double; I: the signed integer of its size (magnitudes fit; compared signed, as
// SSE2 can); U: its unsigned twin for the arithmetic (a NaN's pattern plus the rounding bias
// must wrap, not overflow); 65520 and 2^-14 as bit patterns; a power of two whose ulp is 2^-24.
// (Always inlined: a call in a loop keeps it from vectorizing.)
template <typename T, typename I, int kMantissa, I kOverflowBits, I kMinNormalBits>
[[gnu::always_inline]] inline T round_bits(T x, T subnormal_magic) {
  using U = std::make_unsigned_t<I>;
  constexpr int kDrop = kMantissa - 10;
  constexpr U kMagnitude = U(std::numeric_limits<I>::max());  // all bits but the sign
  constexpr U kInf = std::bit_cast<U>(std::numeric_limits<T>::infinity());
  const U u = std::bit_cast<U>(x);
  const U a = u & kMagnitude;
  const I a_signed = I(a);
  const U normal = (a + ((U(1) << (kDrop - 1)) - 1) + ((a >> kDrop) & 1)) & ~((U(1) << kDrop) - 1);
  const U subnormal = std::bit_cast<U>((std::bit_cast<T>(a) + subnormal_magic) - subnormal_magic);
  // Selects as masks (all ones where the condition holds).
  const U sub_m = -U(a_signed < kMinNormalBits), over_m = -U(a_signed >= kOverflowBits),
          keep_m = -U(a_signed >= I(kInf));
  U r = (subnormal & sub_m) | (normal & ~sub_m);
  r = (kInf & over_m) | (r & ~over_m);
  r = (a & keep_m) | (r & ~keep_m);  // NaN or infinity: itself
  return std::bit_cast<T>(r | (u & ~kMagnitude));
}

[[gnu::always_inline]] inline float round_float(float x) {
  return round_bits<float, int32_t, 23, 0x477FF000, 0x38800000>(x, 0.5f);
}
[[gnu::always_inline]] inline double round_double(double x) {
  return round_bits<double, int64_t, 52, 0x40EFFE0000000000, 0x3F10000000000000>(x, 268435456.0);
}
}  // namespace

double round_to_half(double x) { return round_double(x); }

namespace {

template <typename T, typename Round>
void round_each(const T* src, T* dst, size_t n, Round round) {
  for (size_t i = 0; i < n; ++i) dst[i] = round(src[i]);
}

// Block by block; a block of zeros rounds to itself (±0 keep their sign): runs of them are
// copied (one memcpy a run), or left as they are in place.
template <typename T, typename Round>
void round_blocks(const T* src, T* dst, size_t n, Round round) {
  size_t run = 0;  // start of the current run of zero blocks
  for (size_t b = 0; b < n; b += kZeroBlock) {
    const size_t e = std::min(n, b + kZeroBlock);
    if (all_zero(src + b, e - b)) continue;
    if (src != dst) std::copy(src + run, src + b, dst + run);
    round_each(src + b, dst + b, e - b, round);
    run = e;
  }
  if (src != dst) std::copy(src + run, src + n, dst + run);
}

// True if round(x[i]) == x[i], bit for bit, for every i.
template <typename T, typename Round>
bool rounds_to_itself(const T* x, size_t n, Round round) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  for (size_t b = 0; b < n; b += kZeroBlock) {
    const size_t e = std::min(n, b + kZeroBlock);
    if (all_zero(x + b, e - b)) continue;
    Bits diff = 0;
    for (size_t i = b; i < e; ++i) diff |= std::bit_cast<Bits>(round(x[i])) ^ std::bit_cast<Bits>(x[i]);
    if (diff) return false;
  }
  return true;
}

// (Lambdas, not function pointers, so the rounding inlines.)
constexpr auto kRoundFloat = [](float x) { return round_float(x); };
constexpr auto kRoundDouble = [](double x) { return round_double(x); };

}  // namespace

void round_to_half(const float* src, float* dst, size_t n) { round_blocks(src, dst, n, kRoundFloat); }
void round_to_half(const double* src, double* dst, size_t n) { round_blocks(src, dst, n, kRoundDouble); }
bool is_half_exact(const float* x, size_t n) { return rounds_to_itself(x, n, kRoundFloat); }
bool is_half_exact(const double* x, size_t n) { return rounds_to_itself(x, n, kRoundDouble); }

uint16_t float_to_half_bits(float x) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return sign | 0x7E00;
  const double r = std::fabs(round_to_half(x));
  if (std::isinf(r)) return sign | 0x7C00;
  if (r < kMinNormal) return sign | static_cast<uint16_t>(r / kSubnormalStep);
  int ex = 0;
  const double m = std::frexp(r, &ex);  // r = m 2^ex, m in [0.5, 1)
  const int biased = ex - 1 + 15;
  const auto mantissa = static_cast<uint16_t>((2.0 * m - 1.0) * 1024.0);
  return sign | static_cast<uint16_t>(biased << 10) | mantissa;
}

float half_bits_to_float(uint16_t h) {
  const int exp = (h >> 10) & 0x1F;
  const int mant = h & 0x3FF;
  double v;
  if (exp == 0) v = mant * kSubnormalStep;
  else if (exp == 31) v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else v = std::ldexp(1.0 + mant / 1024.0, exp - 15);
  return static_cast<float>((h & 0x8000) ? -v : v);
}

}  // namespace layoutx::model::numerics
