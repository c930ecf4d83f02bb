// One calibration over every source (issue 36): published whole-model times against layoutx's
// price of their layouts on the device under each hypothesis, with a multiplicative term per chip
// and per source (exporter with its runtime and host) on top of the shared physics:
//
//   log published_i = log price_ih + sum_{k in terms_i} beta_k + e_i
//
// beta_k: log of a chip's factor (the chip's time for what the device does in 1 ms; the device's
// own chip has none) or of a source's term (that exporter's time over layoutx's price of its
// layout); prior beta_k ~ N(log prior_median_k, prior_log_sd_k^2). e_i ~ N(0, sd_i^2) for a rate;
// a floor (the time is at most published_i) enters as a censored likelihood Phi(z_i / sd_i).
//
// Per hypothesis h: the posterior mode of beta (Newton: the log posterior is concave, every term
// being a normal or a log Phi of a linear form), its Laplace covariance and evidence
// log p(records | h). The hypotheses' joint weights are their prior weights (pseudo-BMA+ from
// the team's timings, costmodel/hypothesis_fit.h) times that evidence, normalized: the team's
// timings and the public records weigh the same hypotheses. The members' coefficients stay the
// team fit's: whole-model records are sums over layers that cannot pin per-op terms.
#pragma once
#include <string>
#include <vector>

#include <Eigen/Dense>

namespace layoutx::costmodel {

struct JointTerm {
  std::string name;            // "chip sm8650", "source ai hub 2024 per-head"
  double prior_median = 1;     // exp of the prior mean of beta
  double prior_log_sd = 0.3;   // the prior's sd of beta
};

struct JointObservation {
  double published_ms = 0;      // the record's time a token; a floor's largest time
  double log_sd = 0.15;         // its noise (log scale)
  bool floor = false;           // an inequality: the time is at most published_ms
  std::vector<int> terms;       // the terms that apply (indices into the terms)
  std::vector<double> price_ms; // layoutx's price on the device, per hypothesis (> 0)
};

struct JointMemberFit {
  Eigen::VectorXd beta;         // posterior mode
  Eigen::MatrixXd cov;          // Laplace covariance (inverse of the negative Hessian)
  double log_evidence = 0;      // Laplace approximation of log p(observations | hypothesis)
  bool converged = false;
};

struct JointFit {
  std::vector<JointMemberFit> members;
  std::vector<double> weights;  // joint weights, normalized (0 where the prior weight is 0)
};

// Fits every hypothesis on the observations with use[i] (all when `use` is empty). `prior_weights`
// has one entry per hypothesis (the observations' price_ms size). Throws Error when they disagree.
JointFit fit_joint(const std::vector<JointTerm>& terms, const std::vector<JointObservation>& obs,
                   const std::vector<double>& prior_weights, const std::vector<bool>& use = {});

// A quantity under the mixture, as a factor or a time: the median and a central interval.
struct JointQuantile {
  double median = 0, low = 0, high = 0;
};
// The mixture's prediction of observation `o`'s time (ms), with the posterior of its terms
// (without the record's own noise) at two-sided `level`.
JointQuantile predict_joint(const JointFit& fit, const JointObservation& o, double level);
// Term k's posterior factor (exp beta_k) under the mixture.
JointQuantile joint_term(const JointFit& fit, int k, double level);

// The quantile p of sum_h w_h N(mu_h, sd_h^2) (bisection on the mixture's CDF).
double normal_mixture_quantile(const std::vector<double>& w, const std::vector<double>& mu,
                               const std::vector<double>& sd, double p);

}  // namespace layoutx::costmodel
