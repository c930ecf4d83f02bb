// The mixture maths of a device's competing hypotheses (costmodel/hypothesis_fit.h fits them,
// costmodel/hypothesis_predictor.h predicts with them): pseudo-BMA+ weights from pointwise log
// predictive densities, a mixture of normals' mean and sd, and which hypotheses a predictor keeps.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace layoutx::costmodel {

// Pseudo-BMA+ weights from pointwise log densities lpd[h][i] (deterministic: seeded bootstrap).
// Yao, Vehtari, Simpson, Gelman 2018: w_h proportional to exp(elpd_h), averaged over
// Bayesian-bootstrap (Dirichlet(1, ..., 1)) reweightings of the observations.
std::vector<double> pseudo_bma_plus_weights(const std::vector<std::vector<double>>& lpd, int draws = 1000,
                                            uint64_t seed = 20181);

// A mixture of normals: mean and sd of sum_h w_h N(mu_h, sd_h^2).
struct Mixture {
  double mean = 0, sd = 0;
};
Mixture mix(const std::vector<double>& w, const std::vector<double>& mu, const std::vector<double>& sd);

// The combined predictor keeps the fewest hypotheses (heaviest first) that hold at least this
// share of the weight and renormalizes: the rest change a prediction by at most their share
// times their disagreement, and pricing all 80 hypotheses per graph would cost the explorer
// its speed targets. `predict --hypotheses` lists the kept ones; `calibrate` reports all.
inline constexpr double kPredictorWeightMass = 0.99;
// Which hypotheses are kept (indices into `weights`, in their original order).
std::vector<size_t> kept_hypotheses(const std::vector<double>& weights, double mass = kPredictorWeightMass);

}  // namespace layoutx::costmodel
