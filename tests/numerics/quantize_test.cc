#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "model/numerics/quantize.h"

namespace layoutx::model::numerics {
namespace {

// quantize_u16_in_place by its definition (quantize.h), element by element.
template <typename T>
void quantize_u16_by_definition(std::vector<T>& x) {
  double lo = 0.0, hi = 0.0;
  for (T v : x) {
    lo = std::min(lo, double(v));
    hi = std::max(hi, double(v));
  }
  if (!(hi > lo) || !std::isfinite(hi - lo)) return;
  const double scale = (hi - lo) / 65535.0;
  const double offset = std::nearbyint(-lo / scale);
  for (T& v : x) {
    const double code = std::clamp(std::nearbyint(double(v) / scale) + offset, 0.0, 65535.0);
    v = static_cast<T>((code - offset) * scale);
  }
}

template <typename T>
bool same_bits(T a, T b) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  return std::bit_cast<Bits>(a) == std::bit_cast<Bits>(b);
}

// Tensors as the executor meets them: dense, mostly zero (an unwritten cache) with -0, NaN,
// or an infinity; sizes around the block (256) and lane (4, 8) boundaries.
template <typename T>
std::vector<std::vector<T>> u16_cases() {
  std::mt19937 rng(5);
  std::normal_distribution<double> n(0.0, 3.0);
  std::vector<std::vector<T>> cases;
  for (size_t size : {1, 3, 8, 255, 256, 257, 1029, 9000}) {
    std::vector<T> dense(size), sparse(size, T(0));
    for (auto& v : dense) v = static_cast<T>(n(rng));
    for (size_t i = 0; i < size; i += 300) sparse[i] = static_cast<T>(n(rng));
    cases.push_back(dense);
    cases.push_back(sparse);
    if (size > 2) {
      sparse[1] = T(-0.0);
      cases.push_back(sparse);
      sparse[2] = std::numeric_limits<T>::quiet_NaN();
      cases.push_back(sparse);
      dense[size / 2] = std::numeric_limits<T>::infinity();
      cases.push_back(dense);
    }
  }
  cases.push_back(std::vector<T>(600, T(0)));
  cases.push_back(std::vector<T>(600, T(-2.5)));
  return cases;
}

template <typename T>
void expect_u16_matches_definition() {
  for (const std::vector<T>& x : u16_cases<T>()) {
    std::vector<T> want = x, in_place = x, copied(x.size(), T(7));
    quantize_u16_by_definition(want);
    quantize_u16_in_place(in_place);
    quantize_u16(x.data(), copied.data(), x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_TRUE(same_bits(in_place[i], want[i])) << x.size() << " " << i << " " << x[i];
      ASSERT_TRUE(same_bits(copied[i], want[i])) << x.size() << " " << i << " " << x[i];
    }
  }
}

TEST(Quantize, U16MatchesItsDefinitionBitForBit) {
  expect_u16_matches_definition<float>();
  expect_u16_matches_definition<double>();
}

TEST(Quantize, PerChannelWeightsMatchTheirDefinitionBitForBit) {
  std::mt19937 rng(4);
  std::normal_distribution<double> n(0, 0.02);
  Tensor<double> w({37, 11});
  for (auto& x : w.data) x = n(rng);
  for (int r = 0; r < 37; ++r) w[r * 11 + 4] = 0.0;  // an all-zero channel
  w[5] = -1e-9;                                       // rounds to -0
  for (int bits : {8, 4}) {
    const double qmax = (1 << (bits - 1)) - 1;
    const Tensor<double> q = quantize_weight_per_channel(w, bits);
    for (int c = 0; c < 11; ++c) {
      double amax = 0;
      for (int r = 0; r < 37; ++r) amax = std::max(amax, std::fabs(w[r * 11 + c]));
      const double s = amax / qmax;
      for (int r = 0; r < 37; ++r) {
        const double want = s > 0 ? std::clamp(std::nearbyint(w[r * 11 + c] / s), -qmax, qmax) * s : 0.0;
        EXPECT_TRUE(same_bits(q[r * 11 + c], want)) << bits << " " << r << " " << c;
      }
    }
  }
}

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
