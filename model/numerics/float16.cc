#include "model/numerics/float16.h"

#include <cmath>
#include <limits>

namespace layoutx::model::numerics {

namespace {
constexpr double kMinNormal = 6.103515625e-05;        // 2^-14
constexpr double kSubnormalStep = 5.9604644775390625e-08;  // 2^-24
constexpr double kOverflow = 65520.0;  // halfway between 65504 (max finite) and 2^16: ties go to even = inf
}  // namespace

double round_to_half(double x) {
  if (std::isnan(x) || std::isinf(x)) return x;
  const double a = std::fabs(x);
  if (a >= kOverflow) return std::copysign(std::numeric_limits<double>::infinity(), x);
  double quantum = kSubnormalStep;
  if (a >= kMinNormal) {
    int ex = 0;
    std::frexp(a, &ex);                  // a = m 2^ex, m in [0.5, 1): the binade is [2^(ex-1), 2^ex)
    quantum = std::ldexp(1.0, ex - 11);  // 10 mantissa bits below the leading one
  }
  // a / quantum is exact (power-of-two scaling); nearbyint rounds half to even.
  return std::copysign(std::nearbyint(a / quantum) * quantum, x);
}

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
