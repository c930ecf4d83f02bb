#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "model/numerics/quantize.h"
#include "model/numerics/weights.h"
#include "support/error.h"
#include "tiny_layer.h"

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


// Weight-level SNR (dB) of a quantized weight against the original.
double weight_snr_db(const Tensor<double>& w, const Tensor<double>& q) {
  double s = 0, n = 0;
  for (int64_t i = 0; i < w.size(); ++i) s += w[i] * w[i], n += (q[i] - w[i]) * (q[i] - w[i]);
  return 10 * std::log10(s / n);
}

// Heavy-tailed seeded projection weights of a Spark-proxy-sized layer ([256, 3072] q_k_v_proj).
Tensor<double> heavy_tailed_weight() {
  LayerSpec layer = tiny_layer(LayerType::kSliding);
  layer.hidden = 256;
  layer.heads = 8;
  layer.kv_heads = 2;
  layer.head_dim = 256;
  return seeded_weights(layer, 7).at(Role::kQkv);
}

// LPBQ by its definition: per column and block, the step is k S_c with the per-channel
// S_c = max_b s_cb / 16 and an integer k in [1, 16] no smaller than the block's own scale s_cb;
// every element within half its step (nothing clips); codes in [-8, 7].
TEST(Quantize, LpbqBlockStepsAndErrorBound) {
  const Tensor<double> w = heavy_tailed_weight();
  for (int block : {32, 64, 100}) {  // 100 does not divide 256: a shorter last block
    const Tensor<double> q = quantize_weight_lpbq(w, block), step = lpbq_steps(w, block);
    const int64_t cols = w.shape.back(), rows = w.shape[0];
    for (int64_t c = 0; c < cols; c += 97) {
      double per_channel = 0;
      std::vector<double> own;
      for (int64_t b0 = 0; b0 < rows; b0 += block) {
        double m = 0;
        for (int64_t r = b0; r < std::min(rows, b0 + block); ++r) m = std::max(m, std::fabs(w[r * cols + c]));
        own.push_back(m / 7);
        per_channel = std::max(per_channel, m / 7 / 16);
      }
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t i = r * cols + c;
        const double k = step[i] / per_channel;
        EXPECT_NEAR(k, std::round(k), 1e-9) << block << " " << r << " " << c;
        EXPECT_GE(std::round(k), 1);
        EXPECT_LE(std::round(k), 16);
        EXPECT_GE(step[i], own[r / block] * (1 - 1e-12));        // no clipping
        EXPECT_LT(step[i], own[r / block] + per_channel * 1.0001);  // the smallest such k
        EXPECT_LE(std::fabs(q[i] - w[i]), step[i] / 2 * (1 + 1e-12)) << block << " " << r << " " << c;
        const double code = q[i] / step[i];
        EXPECT_NEAR(code, std::round(code), 1e-9);
        EXPECT_GE(std::round(code), -8);
        EXPECT_LE(std::round(code), 7);
      }
    }
  }
}

// On heavy-tailed weights a block's scale follows its own largest weight, not the column's:
// block 32 is finer than block 64, which is finer than per channel; 8-bit per channel far above.
TEST(Quantize, BlockWiseBeatsPerChannelOnHeavyTailedWeights) {
  const Tensor<double> w = heavy_tailed_weight();
  const double pc = weight_snr_db(w, quantize_weight(w, 4, WeightQuantizer::kPerChannel));
  const double b64 = weight_snr_db(w, quantize_weight(w, 4, WeightQuantizer::kBlock64));
  const double b32 = weight_snr_db(w, quantize_weight(w, 4, WeightQuantizer::kBlock32));
  const double w8 = weight_snr_db(w, quantize_weight(w, 8, WeightQuantizer::kBlock32));  // 8 bits: per channel
  EXPECT_GT(b32, b64);
  EXPECT_GT(b64, pc + 1.0);  // more than a dB: the column's outliers no longer set every step
  EXPECT_GT(w8, b32 + 20.0);
  EXPECT_EQ(quantize_weight(w, 8, WeightQuantizer::kBlock32).data, quantize_weight_per_channel(w, 8).data);
  EXPECT_EQ(quantize_weight(w, 4, WeightQuantizer::kPerChannel).data, quantize_weight_per_channel(w, 4).data);
}

TEST(Quantize, QuantizerNames) {
  for (auto q : {WeightQuantizer::kPerChannel, WeightQuantizer::kBlock32, WeightQuantizer::kBlock64})
    EXPECT_EQ(parse_weight_quantizer(to_string(q), "--quantizer"), q);
  EXPECT_EQ(block_size(WeightQuantizer::kBlock32), 32);
  EXPECT_EQ(block_size(WeightQuantizer::kBlock64), 64);
  try {
    parse_weight_quantizer("block16", "--quantizer");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--quantizer: unknown quantizer 'block16'"), std::string::npos) << e.what();
  }
}

// A static (calibrated) range: values inside are within half a step of themselves, values
// outside clip to the range's ends, zero stays exactly zero.
TEST(Quantize, U16WithACalibratedRangeClipsOutside) {
  const U16Range r{-2.0, 6.0};
  const double scale = 8.0 / 65535;
  std::vector<double> x = {0.0, -0.0, 1.2345, -1.99, 5.999, -3.0, 7.5, 1e9};
  std::vector<double> y(x.size());
  quantize_u16_with_range(x.data(), y.data(), x.size(), r);
  EXPECT_EQ(y[0], 0.0);
  EXPECT_EQ(y[1], 0.0);
  for (int i = 2; i < 5; ++i) EXPECT_LE(std::fabs(y[i] - x[i]), scale / 2 * (1 + 1e-9)) << x[i];
  const double offset = std::nearbyint(2.0 / scale);
  EXPECT_DOUBLE_EQ(y[5], -offset * scale);  // clipped to code 0
  EXPECT_DOUBLE_EQ(y[6], (65535 - offset) * scale);
  EXPECT_DOUBLE_EQ(y[7], (65535 - offset) * scale);
  const U16Range seen = u16_range(x.data(), 6);
  EXPECT_EQ(seen.lo, -3.0);
  EXPECT_EQ(seen.hi, 5.999);
}

}  // namespace
}  // namespace layoutx::model::numerics
