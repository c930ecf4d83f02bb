#include "costmodel/discrepancy.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace layoutx::costmodel {

namespace {
// The grid of correlation lengths (composition distance) the likelihood chooses from.
constexpr double kDistanceScales[] = {0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0};
}  // namespace

Eigen::VectorXd composition(const Eigen::VectorXd& row, const Eigen::VectorXd& theta) {
  Eigen::VectorXd c = row.cwiseProduct(theta);
  const double total = c.sum();
  if (!(total > 0)) return Eigen::VectorXd::Zero(row.size());
  return c / total;
}

double composition_distance(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return 0.5 * (a - b).cwiseAbs().sum();
}

Eigen::VectorXd Discrepancy::k(const Eigen::VectorXd& comp) const {
  Eigen::VectorXd out;
  k_into(comp, out);
  return out;
}

void Discrepancy::k_into(const Eigen::VectorXd& comp, Eigen::VectorXd& out) const {
  out.resize(static_cast<Eigen::Index>(measured.size()));
  for (size_t j = 0; j < measured.size(); ++j) {
    const double d = measured[j].size() == comp.size() ? composition_distance(comp, measured[j]) : 1.0;
    const double x = d / distance_scale;  // past 40 the covariance is below 1e-17 of the variance
    out[static_cast<Eigen::Index>(j)] = x > 40 ? 0.0 : rel_sd * rel_sd * std::exp(-x);
  }
}

void Discrepancy::finish() {
  const Eigen::Index n = static_cast<Eigen::Index>(measured.size());
  Eigen::MatrixXd K(n, n);
  for (Eigen::Index i = 0; i < n; ++i) K.col(i) = k(measured[static_cast<size_t>(i)]);
  K += nugget_rel_sd * nugget_rel_sd * Eigen::MatrixXd::Identity(n, n);
  inverse_ = n > 0 ? Eigen::MatrixXd(K.ldlt().solve(Eigen::MatrixXd::Identity(n, n))) : Eigen::MatrixXd();
  Eigen::VectorXd r(n);
  for (Eigen::Index i = 0; i < n; ++i) r[i] = residual[static_cast<size_t>(i)];
  alpha_ = n > 0 ? Eigen::VectorXd(inverse_ * r) : Eigen::VectorXd();
}

Discrepancy::At Discrepancy::at(const Eigen::VectorXd& row, const Eigen::VectorXd& theta) const {
  At a;
  if (measured.empty() || inverse_.rows() != static_cast<Eigen::Index>(measured.size())) {
    a.rel_sd = rel_sd;
    return a;
  }
  // Every prediction of every priced member comes here: the same sums as composition(), k() and
  // kx' inverse_ kx, in buffers that keep their storage between calls (no allocation).
  thread_local Eigen::VectorXd comp, kx, ikx;
  comp = row.cwiseProduct(theta);
  const double total = comp.sum();
  if (total > 0) comp /= total;
  else comp.setZero();
  k_into(comp, kx);
  a.correction = kx.dot(alpha_);
  ikx.noalias() = inverse_ * kx;
  a.rel_sd = std::sqrt(std::max(0.0, rel_sd * rel_sd - kx.dot(ikx)));
  return a;
}

Discrepancy estimate_discrepancy(const std::vector<HeldOutError>& errors, double nugget_rel_sd,
                                 std::vector<Eigen::VectorXd> measured, std::vector<double> residual) {
  Discrepancy d;
  d.nugget_rel_sd = nugget_rel_sd;
  d.measured = std::move(measured);
  d.residual = std::move(residual);
  double excess = 0;
  for (const HeldOutError& e : errors)
    excess += std::max(0.0, e.rel_error * e.rel_error - e.coef_rel_sd * e.coef_rel_sd - nugget_rel_sd * nugget_rel_sd);
  d.rel_sd = errors.empty() ? 0 : std::sqrt(excess / static_cast<double>(errors.size()));
  // The correlation length: the one of a log grid under which the measured graphs' residuals are
  // likeliest (type-II maximum likelihood, the usual rule for a Gaussian process's length scale).
  double best = -std::numeric_limits<double>::infinity();
  const Eigen::Index n = static_cast<Eigen::Index>(d.measured.size());
  Eigen::VectorXd r(n);
  for (Eigen::Index i = 0; i < n; ++i) r[i] = d.residual[static_cast<size_t>(i)];
  for (double scale : kDistanceScales) {
    Eigen::MatrixXd K(n, n);
    for (Eigen::Index i = 0; i < n; ++i)
      for (Eigen::Index j = 0; j < n; ++j)
        K(i, j) = d.rel_sd * d.rel_sd *
                      std::exp(-composition_distance(d.measured[static_cast<size_t>(i)], d.measured[static_cast<size_t>(j)]) / scale) +
                  (i == j ? nugget_rel_sd * nugget_rel_sd : 0.0);
    const Eigen::LDLT<Eigen::MatrixXd> f(K);
    const double log_det = f.vectorD().array().log().sum();
    const double ll = -0.5 * r.dot(f.solve(r)) - 0.5 * log_det;
    if (n > 0 && ll > best) {
      best = ll;
      d.distance_scale = scale;
    }
  }
  d.finish();
  return d;
}

}  // namespace layoutx::costmodel
