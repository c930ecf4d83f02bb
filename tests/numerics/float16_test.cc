#include <gtest/gtest.h>

#include <cmath>

#include "model/numerics/float16.h"

namespace layoutx::model::numerics {
namespace {

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
