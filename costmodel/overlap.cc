#include "costmodel/overlap.h"

#include <algorithm>

namespace layoutx::costmodel {

std::vector<Side> coefficient_sides(const DeviceSpec& device) {
  std::vector<Side> out;
  out.reserve(device.coefficients.size());
  const bool copies_on_dma = device.structure.copies_on_dma();
  for (const CoefficientSpec& k : device.coefficients) switch (k.unit) {
      case Unit::kSerial: out.push_back(Side::kSerial); break;
      case Unit::kMemory: out.push_back(Side::kMemory); break;
      case Unit::kCompute: out.push_back(Side::kCompute); break;
      case Unit::kCopy: out.push_back(copies_on_dma ? Side::kMemory : Side::kCompute); break;
    }
  return out;
}

SideScale side_scale(const std::vector<Side>& sides, double overlap, const Eigen::VectorXd& raw_row,
                     const Eigen::VectorXd& theta) {
  SideScale s;
  if (overlap <= 0) return s;
  double memory = 0, compute = 0;
  for (size_t k = 0; k < sides.size(); ++k) {
    const double us = raw_row[static_cast<Eigen::Index>(k)] * theta[static_cast<Eigen::Index>(k)];
    if (sides[k] == Side::kMemory) memory += us;
    else if (sides[k] == Side::kCompute) compute += us;
  }
  s.memory_shorter = memory <= compute;
  (s.memory_shorter ? s.memory : s.compute) = 1 - std::min(overlap, 1.0);
  return s;
}

namespace {
double scale_of(Side side, const SideScale& s) {
  return side == Side::kMemory ? s.memory : side == Side::kCompute ? s.compute : 1.0;
}
}  // namespace

void scale_by_side(const std::vector<Side>& sides, const SideScale& s, const Eigen::VectorXd& v, Eigen::VectorXd& out) {
  out = v;
  for (size_t k = 0; k < sides.size(); ++k) out[static_cast<Eigen::Index>(k)] *= scale_of(sides[k], s);
}

Eigen::VectorXd effective_row(const std::vector<Side>& sides, const SideScale& s, const Eigen::VectorXd& raw_row) {
  Eigen::VectorXd r;
  scale_by_side(sides, s, raw_row, r);
  return r;
}

Eigen::VectorXd effective_row(const std::vector<Side>& sides, double overlap, const Eigen::VectorXd& raw_row,
                              const Eigen::VectorXd& theta) {
  return effective_row(sides, side_scale(sides, overlap, raw_row, theta), raw_row);
}

Eigen::VectorXd scaled_theta(const std::vector<Side>& sides, const SideScale& s, const Eigen::VectorXd& theta) {
  Eigen::VectorXd t;
  scale_by_side(sides, s, theta, t);
  return t;
}

}  // namespace layoutx::costmodel
