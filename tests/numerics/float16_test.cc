#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "model/numerics/float16.h"

namespace layoutx::model::numerics {
namespace {

// round_to_half by its definition: the nearest multiple of the float16 quantum of x's binade
// (2^-24 below 2^-14), ties to even; 65520 and up overflow to infinity.
double round_to_half_by_definition(double x) {
  if (std::isnan(x) || std::isinf(x)) return x;
  const double a = std::fabs(x);
  if (a >= 65520.0) return std::copysign(std::numeric_limits<double>::infinity(), x);
  double quantum = std::ldexp(1.0, -24);
  if (a >= std::ldexp(1.0, -14)) {
    int ex = 0;
    std::frexp(a, &ex);
    quantum = std::ldexp(1.0, ex - 11);
  }
  return std::copysign(std::nearbyint(a / quantum) * quantum, x);
}

bool same_bits(double a, double b) { return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b); }

// Every float16 value, the midpoints to its neighbours (the ties) and the floats next to them,
// both signs; infinities, NaN, zeros and subnormals of float; a stride through all floats.
std::vector<float> hard_floats() {
  std::vector<float> xs;
  for (uint32_t h = 0; h < 0x7C00; ++h) {
    const float lo = half_bits_to_float(static_cast<uint16_t>(h));
    const float hi = half_bits_to_float(static_cast<uint16_t>(h + 1));
    const float mid = static_cast<float>((double(lo) + double(hi)) / 2);  // exact: 2 more bits than f16
    for (float x : {lo, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)}) {
      xs.push_back(x);
      xs.push_back(-x);
    }
  }
  for (float x : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                  std::numeric_limits<float>::denorm_min(), 65519.99f, 65520.0f, 1e30f, 0.0f}) {
    xs.push_back(x);
    xs.push_back(-x);
  }
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 4093) xs.push_back(std::bit_cast<float>(uint32_t(u)));
  return xs;
}

TEST(Float16, RoundingMatchesItsDefinition) {
  const std::vector<float> xs = hard_floats();
  std::vector<float> out(xs.size());
  round_to_half(xs.data(), out.data(), xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    const double want = round_to_half_by_definition(xs[i]);
    ASSERT_TRUE(same_bits(round_to_half(double(xs[i])), want)) << std::hexfloat << xs[i];
    ASSERT_TRUE(same_bits(double(out[i]), want)) << std::hexfloat << xs[i];  // array form, in float
  }
  // Doubles between floats: rounded once, from the double.
  for (double x : {1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40), 1.0 + std::ldexp(1.0, -11),
                   std::ldexp(1.0, -25) * (1 + 1e-12), 65519.999999, -3.0 * std::ldexp(1.0, -25)})
    EXPECT_TRUE(same_bits(round_to_half(x), round_to_half_by_definition(x))) << x;
}

TEST(Float16, ArrayRoundingInPlaceAndAroundRunsOfZeros) {
  // Zero runs are copied rather than rounded: -0 must keep its sign, blocks of every length.
  for (size_t n : {0, 1, 255, 256, 257, 1000, 5000}) {
    std::vector<double> x(n, 0.0);
    for (size_t i = 0; i < n; i += 97) x[i] = 1.0 / 3.0 * double(i % 7) - 1.0;
    if (n > 300) x[300] = -0.0;
    std::vector<double> in_place = x, out(n, 42.0);
    round_to_half(x.data(), out.data(), n);
    round_to_half(in_place.data(), in_place.data(), n);
    for (size_t i = 0; i < n; ++i) {
      EXPECT_TRUE(same_bits(out[i], round_to_half_by_definition(x[i]))) << n << " " << i;
      EXPECT_TRUE(same_bits(in_place[i], out[i])) << n << " " << i;
    }
  }
}

TEST(Float16, HalfExactnessIsWhatRoundingLeavesAlone) {
  std::vector<float> x(3000, 0.0f);
  EXPECT_TRUE(is_half_exact(x.data(), x.size()));
  x[2999] = 1.5f;
  x[7] = -0.0f;
  x[100] = std::numeric_limits<float>::infinity();
  x[200] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(is_half_exact(x.data(), x.size()));
  x[2998] = 1.0f + std::ldexp(1.0f, -11);  // between two float16 values
  EXPECT_FALSE(is_half_exact(x.data(), x.size()));
  std::vector<double> d{0.0, 65504.0, std::ldexp(1.0, -24)};
  EXPECT_TRUE(is_half_exact(d.data(), d.size()));
  d.push_back(0.1);
  EXPECT_FALSE(is_half_exact(d.data(), d.size()));
}

TEST(Float16, EveryFinitePatternRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float x = half_bits_to_float(static_cast<uint16_t>(h));
    if (std::isnan(x)) continue;
    EXPECT_EQ(float_to_half_bits(x), h) << std::hex << h;
    EXPECT_EQ(round_to_half(x), double(x)) << std::hex << h;
  }
}

TEST(Float16, KnownValues) {
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half_bits(-2.0f), 0xC000);
  EXPECT_EQ(half_bits_to_float(0x7BFF), 65504.0f);                // largest finite
  EXPECT_EQ(half_bits_to_float(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(half_bits_to_float(0x0400), std::ldexp(1.0f, -14));  // smallest normal
}

TEST(Float16, RoundsToNearestEven) {
  const double ulp1 = std::ldexp(1.0, -10);  // spacing of f16 in [1, 2)
  EXPECT_EQ(round_to_half(1.0 + ulp1 / 2), 1.0);                  // tie -> even mantissa (0)
  EXPECT_EQ(round_to_half(1.0 + 1.5 * ulp1), 1.0 + 2 * ulp1);      // tie -> even mantissa (2)
  EXPECT_EQ(round_to_half(1.0 + 0.51 * ulp1), 1.0 + ulp1);
  EXPECT_EQ(round_to_half(65519.0), 65504.0);
  EXPECT_TRUE(std::isinf(round_to_half(65520.0)));  // the tie above the largest finite goes to inf
  EXPECT_EQ(round_to_half(std::ldexp(1.0, -26)), 0.0);  // below half the smallest subnormal
  EXPECT_EQ(round_to_half(-3.0 * std::ldexp(1.0, -25)), -std::ldexp(1.0, -23));  // subnormal tie -> even
}

TEST(Float16, RelativeErrorWithinHalfAnUlp) {
  for (double x = 1e-3; x < 6e4; x *= 1.0137) {
    const double r = round_to_half(x);
    EXPECT_LE(std::fabs(r - x), std::ldexp(1.0, -11) * x) << x;  // 2^-11 relative
  }
}

}  // namespace
}  // namespace layoutx::model::numerics
