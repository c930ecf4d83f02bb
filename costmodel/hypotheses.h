// Competing hypotheses of the device (DeviceSpec::hypotheses), each fitted on its own, combined
// with weights from the data.
//
// Weights: pseudo-BMA+ (Yao, Vehtari, Simpson, Gelman 2018, "Using stacking to average Bayesian
// predictive distributions"): w_h proportional to exp(elpd_h), elpd_h = sum over the layer
// timings and the op shares of the log predictive density of the observation left out, averaged
// over Bayesian-bootstrap draws of the observations. Shares count because an op-level profile
// (what `layoutx next` proposes for a timed graph) tells the structures apart by them: without
// them a profile could move each hypothesis's coefficients but never the weights. Why this and not plain BMA or stacking: with twelve timings the
// marginal likelihood is dominated by the priors' widths, and plain pseudo-BMA gives one
// hypothesis all the weight on a difference of one timing; the bootstrap accounts for the
// uncertainty of the elpd itself. Stacking optimizes the mixture's own predictive density and
// handles near-duplicate hypotheses better, but twelve points make its optimum unstable.
// Caveat: hypotheses that differ only where nothing was measured (e.g. softmax-fused) fit
// identically and share their weight.
//
// A leave-one-out predictive density: normal, mean the refit's prediction, variance the refit's
// coefficient variance on the row + the timing's own sd + a model error (the rms relative LOO
// error of the OTHER timings times the prediction).
#pragma once
#include <Eigen/Dense>

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "costmodel/calibration.h"
#include "costmodel/device_spec.h"
#include "costmodel/op_level_predictor.h"
#include "costmodel/measurements.h"
#include "costmodel/predictor.h"

namespace layoutx::costmodel {

// How one fit predicts the timings it did not see (ordinary or group leave-one-out).
struct HeldOut {
  std::vector<size_t> record;  // index of each timing in the records
  std::vector<double> measured_ms, predicted_ms, sd_ms;  // sd: the predictive sd (see above)
  std::vector<double> rel_error;                         // (predicted - measured) / measured
  std::vector<double> lpd;                               // log predictive density per timing
};

struct HypothesisFit {
  HypothesisSpec spec;
  DeviceSpec device;      // with_hypothesis(base, spec)
  FitReport report;       // the fit on everything (coefficients, covariance, in-sample rows)
  HeldOut loo;            // one timing out (and its layer's shares)
  HeldOut group_loo;      // twins out together: a quantized graph's w8a16 and w4a16 builds
  double elpd = 0;        // sum of loo.lpd and of the shares' LOO densities (share_lpd)
  double weight = 0;      // pseudo-BMA+ weight
};

struct HypothesisSet {
  std::vector<HypothesisFit> fits;  // in the device spec's order
  std::string method = "pseudo-BMA+ (LOO log predictive density of the timings and op shares, Bayesian bootstrap)";
};

// Fits every hypothesis of `device` (a device without hypotheses: one, the spec itself).
HypothesisSet fit_hypotheses(const std::vector<MeasurementRecord>& records, const DeviceSpec& device,
                             const std::vector<std::string>& data_files = {});

// Held-out predictions of the timings under `masks` (one per timing: the records to fit on).
HeldOut held_out(const std::vector<MeasurementRecord>& records, const DeviceSpec& device,
                 const std::vector<size_t>& timings, const std::vector<std::vector<bool>>& masks);
// Leave-one-out log predictive densities of the op shares (each share out alone; its layer's
// timing stays): predicted share = the share's ops' row . theta / the layer's row . theta, sd from
// the coefficient part, the share's own sd and a model error (the rms LOO error of the other
// shares). Empty when there are no shares.
std::vector<double> share_lpd(const std::vector<MeasurementRecord>& records, const DeviceSpec& device);
// What the weights are computed from: the timings' LOO densities (`timings`, fitted with the
// same `records` and `device`) followed by the shares' (share_lpd).
std::vector<double> pointwise_lpd(const HeldOut& timings, const std::vector<MeasurementRecord>& records,
                                  const DeviceSpec& device);
// The masks of ordinary and group leave-one-out (timings: indices of the layer timings).
std::vector<std::vector<bool>> loo_masks(const std::vector<MeasurementRecord>& records,
                                         const std::vector<size_t>& timings, bool group_twins);

// Pseudo-BMA+ weights from pointwise log densities lpd[h][i] (deterministic: seeded bootstrap).
std::vector<double> pseudo_bma_plus_weights(const std::vector<std::vector<double>>& lpd, int draws = 1000,
                                            uint64_t seed = 20181);

// A mixture of normals: mean and sd of sum_h w_h N(mu_h, sd_h^2).
struct Mixture {
  double mean = 0, sd = 0;
};
Mixture mix(const std::vector<double>& w, const std::vector<double>& mu, const std::vector<double>& sd);

// One hypothesis's figure for a graph.
struct HypothesisFigure {
  std::string name;
  double weight = 0;
  Prediction prediction;
};

// The combined predictor: every hypothesis's calibrated OpLevelPredictor, mixed by weight. The
// interval is the mixture's (within-hypothesis uncertainty + the spread between hypotheses);
// the difference of two predictions likewise (so hypotheses that disagree on the sign of a
// difference widen it). Prediction::design_row is the hypotheses' rows concatenated.
class HypothesisPredictor : public Predictor {
 public:
  HypothesisPredictor(std::vector<std::string> names, std::vector<double> weights,
                      std::vector<std::unique_ptr<OpLevelPredictor>> members);
  Prediction predict(const model::LayerGraph& graph) const override;
  std::vector<HypothesisFigure> predict_each(const model::LayerGraph& graph) const;
  std::string device() const override { return members_.front()->device(); }
  std::string calibration_id() const override { return id_; }
  double difference_half_width_ms(const Prediction& a, const Prediction& b) const override;
  // The mixture's own probability (sum of w_h P_h(a faster)), not a normal with its spread.
  double probability_faster(const Prediction& a, const Prediction& b) const override;
  // The mixture as one linear belief over the concatenated coefficients: member h's block is
  // w_h theta_h with covariance w_h^2 cov_h (so row . mean / 1e3 is the combined latency), and
  // the weighted model error. It leaves out the spread between the hypotheses' means, which
  // difference_half_width_ms carries; with one hypothesis holding nearly all the weight (as the
  // shipped data gives) the two agree.
  std::optional<CoefficientBelief> belief() const override;
  // The mixture itself: member h's calibrated belief over its slice of the concatenated row
  // (mean theta_h, covariance cov_h, its model error), with weight w_h. What `next` values a
  // measurement under: a timing also moves the weights, so the spread between hypotheses counts.
  std::vector<BeliefComponent> belief_components() const override;
  // Each member's class rows in its slice of the concatenated row (a class one member lacks,
  // e.g. a folded softmax's, is zero in that member's slice).
  std::vector<std::pair<std::string, std::vector<double>>> class_rows(const model::LayerGraph& graph) const override;
  // Latency from a cached (concatenated) design row: the weighted sum of the members' dot products.
  double latency_from_row(const std::vector<double>& row) const;
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<double>& weights() const { return weights_; }
  const OpLevelPredictor& member(size_t h) const { return *members_[h]; }
  size_t size() const { return members_.size(); }

 private:
  // each[j] priced from featurization features[group[j]]: each[0] with its ops, the rest with
  // their ops' costs in op_ms[j] (OpLevelPredictor::price).
  Prediction combine(std::vector<Prediction>& each, const std::vector<std::vector<double>>& op_ms,
                     const std::vector<double>& weights, const std::vector<size_t>& group,
                     const std::vector<LayerFeatures>& features) const;
  // Each member's mean and sd of latency(a) - latency(b) (ms); false when a row is not this
  // predictor's (then the defaults apply).
  bool member_differences(const Prediction& a, const Prediction& b, std::vector<double>& mu,
                          std::vector<double>& sd) const;
  std::vector<std::string> names_;
  std::vector<double> weights_;
  std::vector<std::unique_ptr<OpLevelPredictor>> members_;
  std::vector<size_t> offset_;  // where member h's row starts in the concatenated row
  Eigen::VectorXd weighted_theta_;  // w_h theta_h / 1e3, concatenated: latency = row . this
  // twin_[h]: the first member with the same fitted calibration as h (h itself if none): members
  // of one such class whose featurizations of a graph agree are priced once.
  std::vector<size_t> twin_;
  std::string id_;
};

// The combined predictor keeps the fewest hypotheses (heaviest first) that hold at least this
// share of the weight and renormalizes: the rest change a prediction by at most their share
// times their disagreement, and pricing all 80 hypotheses per graph would cost the explorer
// its speed targets. `predict --hypotheses` lists the kept ones; `calibrate` reports all.
inline constexpr double kPredictorWeightMass = 0.99;
// Which hypotheses are kept (indices into `weights`, in their original order).
std::vector<size_t> kept_hypotheses(const std::vector<double>& weights, double mass = kPredictorWeightMass);

// Saves the combined predictor (the kept hypotheses' weights and calibrations) as one hypotheses
// document (costmodel/hypotheses_document.h), atomically; `source` is hypotheses_source_hash over
// the data files and the device (hypotheses included), so a loader sees when to refit.
void save_hypotheses(const HypothesisSet& set, const std::string& source, const std::string& path);
// Hash of the data files' bytes and of every hypothesis's derived spec.
std::string hypotheses_source_hash(const std::vector<std::string>& file_bytes, const DeviceSpec& device);

// The combined predictor every verb uses for a device with hypotheses: the saved hypothesis
// calibration its spec names (calibration.hypotheses, fitted on calibration.measurements) when
// fresh and fitted for this device, else a refit in memory on the measurements (said on `log`).
// Throws Error when the device names no measurements. `refitted` (if given) says whether it refit.
std::unique_ptr<HypothesisPredictor> load_shipped_hypothesis_predictor(const DeviceSpec& device, std::ostream& log,
                                                                       bool* refitted = nullptr);
// The same for the default device (kDefaultDevice).
std::unique_ptr<HypothesisPredictor> load_default_hypothesis_predictor(std::ostream& log);
// The same from a fitted set (no file), keeping the hypotheses that hold `mass` of the weight
// (1: every hypothesis).
std::unique_ptr<HypothesisPredictor> make_predictor(const HypothesisSet& set, const DeviceSpec& device,
                                                    double mass = kPredictorWeightMass);
// The same with legality rules of the caller's (e.g. a loop that adds compile outcomes).
std::unique_ptr<HypothesisPredictor> make_predictor(const HypothesisSet& set, const RuleSet& rules,
                                                    double mass = kPredictorWeightMass);

}  // namespace layoutx::costmodel
