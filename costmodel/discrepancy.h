// Model discrepancy (cost model 3): the error of the model itself on a graph, beyond the
// coefficients' uncertainty, known at the measured graphs and growing with the distance from them.
//
// Kennedy and O'Hagan (2001, "Bayesian calibration of computer models"): measured = model x
// (1 + delta(graph)) + noise, with delta a Gaussian process over graphs. Here a graph is placed by
// its time composition (the fraction of its time each coefficient carries, row_k theta_k over
// row . theta on its effective row: costmodel/overlap.h); two graphs' distance d is the total-
// variation distance of their compositions (half the L1; 0 for graphs priced alike, 1 for graphs
// that share no coefficient), and
//   cov(delta(a), delta(b)) = rel_sd^2 * exp(-d(a, b) / distance_scale)
// (exponential of an L1 distance: a valid covariance). The measured graphs' relative residuals r
// (measured / fitted - 1) with noise nugget_rel_sd give, at a graph x with covariances k to them,
//   correction  k' (K + nugget^2 I)^-1 r         (the prediction is model x (1 + correction))
//   sd          sqrt(rel_sd^2 - k' (K + nugget^2 I)^-1 k)
// so a measured graph is predicted at about its measurement with about its noise as sd, and a
// graph unlike any measured one gets the model's value with sd rel_sd.
// Set from the data by stated rules (calibrate):
//   nugget_rel_sd   the timings' stated sd (their median);
//   distance_scale  of the grid 0.005 .. 1, the one under which the measured graphs' residuals
//                   are likeliest (type-II maximum likelihood, the usual rule for a Gaussian
//                   process's length scale);
//   rel_sd          method of moments over the leave-one-out errors e_i with coefficient sds c_i:
//                   rel_sd^2 = mean_i max(0, e_i^2 - c_i^2 - nugget^2).
// Why moments and not a conformal quantile: with 14 held-out timings a 90% split-conformal
// quantile is the largest error (rank ceil(0.9 * 15) = 14 of 14), so one timing would set every
// interval; the moment estimate uses every error and assumes a normal discrepancy. The replays
// and group leave-one-out check its coverage (`layoutx calibrate` prints it).
#pragma once
#include <Eigen/Dense>

#include <vector>

namespace layoutx::costmodel {

struct Discrepancy {
  double nugget_rel_sd = 0;
  double rel_sd = 0;
  double distance_scale = 1;
  std::vector<Eigen::VectorXd> measured;  // compositions of the measured graphs (one per distinct graph)
  std::vector<double> residual;           // their relative residuals, measured / fitted - 1
  bool empty() const { return measured.empty(); }
  // Computes the solve below from the fields above (after setting or reading them).
  void finish();
  struct At {
    double correction = 0;  // relative: the prediction is the model's x (1 + correction)
    double rel_sd = 0;      // sd of the remaining discrepancy, relative
  };
  At at(const Eigen::VectorXd& row, const Eigen::VectorXd& theta) const;

 private:
  Eigen::MatrixXd inverse_;  // (K + nugget^2 I)^-1
  Eigen::VectorXd alpha_;    // inverse_ r
  Eigen::VectorXd k(const Eigen::VectorXd& comp) const;
  void k_into(const Eigen::VectorXd& comp, Eigen::VectorXd& out) const;  // k(comp), into `out`
};

// row_k theta_k / (row . theta); zeros when the row prices to nothing.
Eigen::VectorXd composition(const Eigen::VectorXd& row, const Eigen::VectorXd& theta);
// Half the L1 distance of two compositions, in [0, 1].
double composition_distance(const Eigen::VectorXd& a, const Eigen::VectorXd& b);

// One held-out timing as the discrepancy is estimated from it.
struct HeldOutError {
  double rel_error = 0;    // (predicted - measured) / measured
  double coef_rel_sd = 0;  // the refit's coefficient sd on its row, relative to the prediction
};
// The rules above; `measured` and `residual` are the measured graphs'.
Discrepancy estimate_discrepancy(const std::vector<HeldOutError>& errors, double nugget_rel_sd,
                                 std::vector<Eigen::VectorXd> measured, std::vector<double> residual);

}  // namespace layoutx::costmodel
