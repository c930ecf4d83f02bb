#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model/numerics/quantize.h"

namespace layoutx::model::numerics {
namespace {

TEST(Quantize, PerChannelSymmetricWeights) {
  std::mt19937 rng(3);
  std::normal_distribution<double> n(0, 0.02);
  Tensor<double> w({64, 5});
  for (auto& x : w.data) x = n(rng);
  w[2 * 5 + 3] = 0.5;  // an outlier in channel 3 coarsens channel 3 only
  for (int bits : {8, 4}) {
    const double qmax = (1 << (bits - 1)) - 1;
    const Tensor<double> q = quantize_weight_per_channel(w, bits);
    for (int c = 0; c < 5; ++c) {
      double amax = 0;
      for (int r = 0; r < 64; ++r) amax = std::max(amax, std::fabs(w[r * 5 + c]));
      const double scale = amax / qmax;
      for (int r = 0; r < 64; ++r) {
        const double code = q[r * 5 + c] / scale;
        EXPECT_NEAR(code, std::nearbyint(code), 1e-9);           // on the channel's grid
        EXPECT_LE(std::fabs(q[r * 5 + c] - w[r * 5 + c]), scale / 2 + 1e-15);  // nearest code
      }
    }
    EXPECT_DOUBLE_EQ(q[2 * 5 + 3], 0.5);  // the channel's max is a code exactly
  }
}

TEST(Quantize, U16AffineFromTheTensorsRange) {
  std::vector<double> x{-3.0, -1.234567, 0.0, 0.5, 2.0};
  const std::vector<double> orig = x;
  quantize_u16_in_place(x);
  const double scale = 5.0 / 65535;
  for (size_t i = 0; i < x.size(); ++i) EXPECT_LE(std::fabs(x[i] - orig[i]), scale / 2 + 1e-15);
  EXPECT_EQ(x[2], 0.0);  // zero is exact
  EXPECT_NEAR(x[0], -3.0, 1e-12);
  std::vector<float> pos{0.25f, 1.0f};  // range [0, 1]: the range always includes 0
  quantize_u16_in_place(pos);
  EXPECT_NEAR(pos[0], 0.25, 0.5 / 65535 + 1e-7);
  std::vector<double> zeros(4, 0.0);
  quantize_u16_in_place(zeros);
  EXPECT_EQ(zeros, std::vector<double>(4, 0.0));
}

}  // namespace
}  // namespace layoutx::model::numerics
