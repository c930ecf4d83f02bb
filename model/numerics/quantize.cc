#include "model/numerics/quantize.h"

#include <algorithm>
#include <cmath>

#include "support/error.h"

namespace layoutx::model::numerics {

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
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const double s = scale[c];
      q[r * cols + c] = s > 0 ? std::clamp(std::nearbyint(w[r * cols + c] / s), -qmax, qmax) * s : 0.0;
    }
  return q;
}

template <typename T>
void quantize_u16_in_place(std::vector<T>& x) {
  if (x.empty()) return;
  double lo = 0.0, hi = 0.0;
  for (T v : x) {
    lo = std::min(lo, double(v));
    hi = std::max(hi, double(v));
  }
  if (!(hi > lo) || !std::isfinite(hi - lo)) return;  // all zero, or non-finite: nothing a code could hold
  const double scale = (hi - lo) / 65535.0;
  const double offset = std::nearbyint(-lo / scale);
  for (T& v : x) {
    const double code = std::clamp(std::nearbyint(double(v) / scale) + offset, 0.0, 65535.0);
    v = static_cast<T>((code - offset) * scale);
  }
}

template void quantize_u16_in_place<float>(std::vector<float>&);
template void quantize_u16_in_place<double>(std::vector<double>&);

}  // namespace layoutx::model::numerics
