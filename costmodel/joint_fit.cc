#include "costmodel/joint_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "support/error.h"

namespace layoutx::costmodel {
namespace {

constexpr double kHalfLog2Pi = 0.91893853320467274178;  // log(2 pi) / 2

// log Phi(z) and lambda(z) = phi(z) / Phi(z), stable far in the lower tail (there Phi(z) ~
// phi(z) / -z, so lambda ~ -z).
void log_phi_and_ratio(double z, double& log_cdf, double& ratio) {
  const double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0));
  if (z > -30 && cdf > 1e-300) {
    log_cdf = std::log(cdf);
    ratio = std::exp(-0.5 * z * z - kHalfLog2Pi) / cdf;
  } else {
    log_cdf = -0.5 * z * z - kHalfLog2Pi - std::log(-z);
    ratio = -z;
  }
}

struct Evaluation {
  double log_post = 0;
  Eigen::VectorXd grad;
  Eigen::MatrixXd hess;  // of the log posterior (negative definite)
};

Evaluation evaluate(const std::vector<JointTerm>& terms, const std::vector<JointObservation>& obs,
                    const std::vector<bool>& use, size_t h, const Eigen::VectorXd& beta) {
  const auto K = static_cast<Eigen::Index>(terms.size());
  Evaluation e;
  e.grad = Eigen::VectorXd::Zero(K);
  e.hess = Eigen::MatrixXd::Zero(K, K);
  for (Eigen::Index k = 0; k < K; ++k) {
    const double tau = terms[static_cast<size_t>(k)].prior_log_sd;
    const double d = beta(k) - std::log(terms[static_cast<size_t>(k)].prior_median);
    e.log_post += -0.5 * d * d / (tau * tau) - std::log(tau) - kHalfLog2Pi;
    e.grad(k) -= d / (tau * tau);
    e.hess(k, k) -= 1 / (tau * tau);
  }
  for (size_t i = 0; i < obs.size(); ++i) {
    if (!use.empty() && !use[i]) continue;
    const JointObservation& o = obs[i];
    double r = std::log(o.published_ms / o.price_ms[h]);
    for (int k : o.terms) r -= beta(k);
    const double s = o.log_sd, z = r / s;
    double dz = 0, d2 = 0;  // d log-likelihood / dz and d2 / dz2
    if (o.floor) {
      double log_cdf = 0, ratio = 0;
      log_phi_and_ratio(z, log_cdf, ratio);
      e.log_post += log_cdf;
      dz = ratio;
      d2 = -ratio * (z + ratio);
    } else {
      e.log_post += -0.5 * z * z - std::log(s) - kHalfLog2Pi;
      dz = -z;
      d2 = -1;
    }
    // dz / dbeta_k = -1 / s for each term of the record.
    for (int k : o.terms) {
      e.grad(k) += -dz / s;
      for (int l : o.terms) e.hess(k, l) += d2 / (s * s);
    }
  }
  return e;
}

JointMemberFit fit_member(const std::vector<JointTerm>& terms, const std::vector<JointObservation>& obs,
                          const std::vector<bool>& use, size_t h) {
  const auto K = static_cast<Eigen::Index>(terms.size());
  JointMemberFit m;
  m.beta.resize(K);
  for (Eigen::Index k = 0; k < K; ++k) m.beta(k) = std::log(terms[static_cast<size_t>(k)].prior_median);
  Evaluation e = evaluate(terms, obs, use, h, m.beta);
  for (int it = 0; it < 200 && K > 0; ++it) {
    const Eigen::VectorXd step = (-e.hess).ldlt().solve(e.grad);  // Newton: the ascent direction
    double t = 1;
    Evaluation next;
    for (; t > 1e-8; t /= 2) {
      next = evaluate(terms, obs, use, h, m.beta + t * step);
      if (next.log_post >= e.log_post - 1e-12) break;
    }
    if (t <= 1e-8) break;
    m.beta += t * step;
    e = std::move(next);
    if (step.cwiseAbs().maxCoeff() * t < 1e-10) {
      m.converged = true;
      break;
    }
  }
  if (K == 0) m.converged = true;
  const Eigen::MatrixXd precision = -e.hess;
  m.cov = precision.inverse();
  const Eigen::LLT<Eigen::MatrixXd> llt(precision);
  double log_det = 0;
  for (Eigen::Index k = 0; k < K; ++k) log_det += 2 * std::log(llt.matrixL()(k, k));
  m.log_evidence = e.log_post + static_cast<double>(K) * kHalfLog2Pi - 0.5 * log_det;
  return m;
}

}  // namespace

JointFit fit_joint(const std::vector<JointTerm>& terms, const std::vector<JointObservation>& obs,
                   const std::vector<double>& prior_weights, const std::vector<bool>& use) {
  const size_t H = prior_weights.size();
  if (!use.empty() && use.size() != obs.size()) throw Error("joint fit: one use flag per observation");
  for (const auto& o : obs) {
    if (o.price_ms.size() != H) throw Error("joint fit: an observation lacks a price per hypothesis");
    if (!(o.published_ms > 0) || !(o.log_sd > 0)) throw Error("joint fit: an observation without a time or noise");
    for (double p : o.price_ms)
      if (!(p > 0)) throw Error("joint fit: a price that is not positive");
    for (int k : o.terms)
      if (k < 0 || static_cast<size_t>(k) >= terms.size()) throw Error("joint fit: an observation's term is out of range");
  }
  for (const auto& t : terms)
    if (!(t.prior_median > 0) || !(t.prior_log_sd > 0)) throw Error("joint fit: term " + t.name + ": prior not positive");
  JointFit fit;
  double top = -std::numeric_limits<double>::infinity();
  for (size_t h = 0; h < H; ++h) {
    fit.members.push_back(fit_member(terms, obs, use, h));
    if (prior_weights[h] > 0) top = std::max(top, fit.members.back().log_evidence);
  }
  double total = 0;
  for (size_t h = 0; h < H; ++h) {
    const double w = prior_weights[h] > 0 ? prior_weights[h] * std::exp(fit.members[h].log_evidence - top) : 0;
    fit.weights.push_back(w);
    total += w;
  }
  for (double& w : fit.weights) w = total > 0 ? w / total : 0;
  return fit;
}

double normal_mixture_quantile(const std::vector<double>& w, const std::vector<double>& mu,
                               const std::vector<double>& sd, double p) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (size_t h = 0; h < w.size(); ++h) {
    if (w[h] <= 0) continue;
    lo = std::min(lo, mu[h] - 12 * sd[h] - 1e-9);
    hi = std::max(hi, mu[h] + 12 * sd[h] + 1e-9);
  }
  if (!(lo < hi)) return 0;
  auto cdf = [&](double x) {
    double c = 0;
    for (size_t h = 0; h < w.size(); ++h) {
      if (w[h] <= 0) continue;
      c += w[h] * (sd[h] > 0 ? 0.5 * std::erfc(-(x - mu[h]) / (sd[h] * std::sqrt(2.0))) : (x >= mu[h] ? 1.0 : 0.0));
    }
    return c;
  };
  for (int it = 0; it < 200 && hi - lo > 1e-12; ++it) {
    const double mid = 0.5 * (lo + hi);
    (cdf(mid) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

namespace {

// The mixture's quantiles of a linear form a . beta + offset_h, exponentiated.
JointQuantile mixture_of(const JointFit& fit, const std::vector<int>& terms, const std::vector<double>& offset,
                         double level) {
  std::vector<double> mu, sd;
  for (size_t h = 0; h < fit.members.size(); ++h) {
    const JointMemberFit& m = fit.members[h];
    double mean = offset[h], var = 0;
    for (int k : terms) {
      mean += m.beta(k);
      for (int l : terms) var += m.cov(k, l);
    }
    mu.push_back(mean);
    sd.push_back(std::sqrt(std::max(0.0, var)));
  }
  const double tail = (1 - level) / 2;
  return {std::exp(normal_mixture_quantile(fit.weights, mu, sd, 0.5)),
          std::exp(normal_mixture_quantile(fit.weights, mu, sd, tail)),
          std::exp(normal_mixture_quantile(fit.weights, mu, sd, 1 - tail))};
}

}  // namespace

JointQuantile predict_joint(const JointFit& fit, const JointObservation& o, double level) {
  std::vector<double> offset;
  for (double p : o.price_ms) offset.push_back(std::log(p));
  return mixture_of(fit, o.terms, offset, level);
}

JointQuantile joint_term(const JointFit& fit, int k, double level) {
  return mixture_of(fit, {k}, std::vector<double>(fit.members.size(), 0.0), level);
}

}  // namespace layoutx::costmodel
