// Fitting the competing hypotheses of a device (DeviceSpec::hypotheses): each fitted on its own,
// with its leave-one-out densities, and weighted from the data (costmodel/mixture.h).
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
#include <string>
#include <vector>

#include "costmodel/calibration.h"
#include "costmodel/device_spec.h"
#include "costmodel/measurements.h"

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

}  // namespace layoutx::costmodel
