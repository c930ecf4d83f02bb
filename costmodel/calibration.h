// Calibration: fit the cost coefficients to measured layer timings and op shares together,
// regularized toward the device spec's priors; leave-one-out over the timings; save / load.
//
// The fit (all in "multiplier" space m_k = theta_k / prior_k, so every coefficient is O(1)):
//   layer timing i:  effective row . theta = ms_i (the raw row without overlap)  (sd: rel_sd * ms_i)
//   op share j:      sum over the matched ops of row . theta = share_j * (the layer's row . theta):
//                    a share of the layer's busy time (the sum of its ops' times, unscaled by any
//                    overlap: costmodel/overlap.h), linear in theta
//                    (sd: share_sd * ms(layer), the layer's MEASURED time)
//   prior k:         m_k = 1                                                     (sd: rel_sd_k)
// minimized as weighted least squares subject to m >= 0 (coefficients are costs and cannot be
// negative): a ridge toward the priors whose weights are the priors' stated uncertainties.
#pragma once
#include <Eigen/Dense>

#include <string>
#include <vector>

#include "costmodel/device_spec.h"
#include "costmodel/discrepancy.h"
#include "costmodel/measurements.h"
#include "costmodel/overlap.h"
#include "costmodel/predictor.h"

namespace layoutx::costmodel {

// Bump when the saved file's layout changes.
inline constexpr int kCalibrationVersion = 1;

struct Calibration {
  std::string device;     // device spec name
  std::string date;       // UTC, ISO 8601, when it was fitted
  std::string data_hash;  // hash of the measurement records and the device's priors (16 hex)
  std::string id;         // short hash of data_hash and the fitted coefficients (8 hex)
  std::vector<std::string> data_files;
  // source_hash() of the data files' bytes when it was fitted on files alone (empty when database
  // records were in the fit): lets a loader see the data is unchanged without parsing it.
  std::string source_hash;
  std::vector<std::string> names;  // coefficient names, DeviceSpec::coefficients order
  Eigen::VectorXd theta;           // fitted coefficients (us, us/MB, us/MMAC)
  Eigen::MatrixXd covariance;      // posterior covariance of theta (same units, squared)
  // Interval: latency +- z * sqrt(row' cov row + (model error sd)^2); the interval is z x prediction_sd_ms.
  // The model error: with a discrepancy (cost model 3, costmodel/discrepancy.h) its sd at the
  // graph's row; without one (older files, prior calibrations) model_rel_sd * latency.
  double model_rel_sd = 0;
  Discrepancy discrepancy;
  double z = kZ90;  // kIntervalLevel two-sided, normal (costmodel/predictor.h)
  // Leave-one-out summary over the layer timings (absolute relative errors).
  int loo_count = 0;
  double loo_median = 0, loo_max = 0, loo_rms = 0;
  double effective_parameters = 0;  // trace of the fit's hat matrix over the data rows
};

// What the device spec alone predicts: every coefficient at its prior, no uncertainty (a
// generator of synthetic timings for a structure; not a fit).
Calibration prior_calibration(const DeviceSpec& device);

// True when two calibrations predict alike: the same coefficients, values, covariance and
// interval (hypotheses that differ only where nothing was measured fit identically).
bool fitted_identically(const Calibration& a, const Calibration& b);

// One measurement as the fit saw it.
struct FitRow {
  const MeasurementRecord* record = nullptr;
  double measured = 0;  // ms (timing) or share
  double fitted = 0;    // ms, or the matched ops' fitted time over the layer's FITTED time
  double residual = 0;  // fitted - measured (same unit)
  double sd = 0;        // the measurement's sd in that unit
};

struct LooRow {
  const MeasurementRecord* record = nullptr;
  double measured_ms = 0;
  double predicted_ms = 0;  // from a fit without this timing and without the shares of its layer
  double rel_error = 0;     // (predicted - measured) / measured
};

struct FitReport {
  Calibration calibration;
  std::vector<FitRow> rows;  // in record order
  std::vector<LooRow> loo;   // one per layer timing
};

// Fits theta to `records` (timings and shares). Returns the coefficients only.
Eigen::VectorXd fit_coefficients(const std::vector<MeasurementRecord>& records, const DeviceSpec& device);

// Fits on subsets of the records, preparing the graphs once: for each mask, the fit on the
// records with mask[i] true (theta in us units and its posterior covariance). `layer_rows[i]` is
// record i's layer design row (a timing's row; a share: its layer's row), for predicting it.
struct SubsetFits {
  std::vector<Eigen::VectorXd> rows;  // record i's own row (a timing: its layer's; a share: its ops'), unscaled
  std::vector<Eigen::VectorXd> layer_rows;  // unscaled (busy time of each side, summed)
  std::vector<Side> sides;  // the coefficients' sides and the structure's overlap (costmodel/overlap.h)
  double overlap = 0;
  // Record's layer row as fit `fit` prices it: the effective row under that fit's coefficients
  // (layer_rows[record] itself without overlap). latency_ms = layer_row(f, i) . theta[f] / 1e3.
  Eigen::VectorXd layer_row(size_t fit, size_t record) const;
  std::vector<Eigen::VectorXd> theta;
  std::vector<Eigen::MatrixXd> covariance;
};
SubsetFits fit_subsets(const std::vector<MeasurementRecord>& records, const DeviceSpec& device,
                       const std::vector<std::vector<bool>>& masks);

// Full calibration: fit, per-record fitted values, leave-one-out, uncertainty, ids.
// `data_files` is recorded for provenance only. Throws Error if no layer timing is given.
FitReport calibrate(const std::vector<MeasurementRecord>& records, const DeviceSpec& device,
                    const std::vector<std::string>& data_files = {});

// What decides a fit of `records` under `device`, hashed: every record's design rows, the
// coefficients' priors, bounds and sides, the overlap. Two specs with equal signatures fit
// identically (hypotheses that differ only where nothing was measured: fit_hypotheses fits one).
std::string fit_signature(const std::vector<MeasurementRecord>& records, const DeviceSpec& device);
// Sets a calibration's device, data hash and id as calibrate() does for `device` (a fit reused
// for another hypothesis with the same signature gets that hypothesis's own stamps).
void restamp(Calibration& c, const std::vector<MeasurementRecord>& records, const DeviceSpec& device);

// Hash of the records and of the device spec's coefficient definitions (16 hex digits).
std::string data_hash(const std::vector<MeasurementRecord>& records, const DeviceSpec& device);

// Hash of the data files' raw bytes, in order, and of the device spec's coefficient definitions
// (16 hex digits). Equal source hashes imply equal data hashes; a changed comment changes the
// source hash only (the loader then parses the records and compares data hashes).
std::string source_hash(const std::vector<std::string>& file_bytes, const DeviceSpec& device);

// A layer predicted from its unscaled design row alone (no graph): the effective row under the
// calibration's coefficients (costmodel/overlap.h), scaled by the discrepancy's correction
// (costmodel/discrepancy.h); its latency, model error and interval sd. What OpLevelPredictor
// prices per op, for a whole row (the replay, which has rows, not graphs).
struct RowPrediction {
  Eigen::VectorXd row;  // effective and corrected: ms = row . theta / 1e3
  double ms = 0;
  double model_rel_sd = 0;
  double sd_ms = 0;  // sqrt(row' cov row + (model_rel_sd ms)^2)
};
RowPrediction predict_row(const Calibration& c, const DeviceSpec& device, const Eigen::VectorXd& raw_row);

// The relative model error sd of a layer whose (effective) design row is `row`.
double model_rel_sd_at(const Calibration& c, const Eigen::VectorXd& row);

// The sd (ms) of a layer's prediction: its (effective) row's coefficient variance plus the model
// error model_rel_sd x latency. The one formula every interval uses.
double prediction_sd_ms(const Calibration& c, const Eigen::VectorXd& row, double latency_ms, double model_rel_sd);


// YAML file (configs/calibration/<device>.calibration.yaml), written atomically; the document
// itself (also what `calibrate --db` stores in the database).
void save_calibration(const Calibration& c, const FitReport* report, const std::string& path);
std::string calibration_document(const Calibration& c, const FitReport* report);
// Throws Error if the file is malformed or was made for another device / coefficient set /
// feature version.
Calibration load_calibration(const std::string& path, const DeviceSpec& device);
// Same for a document in memory; `name` stands for the file in messages.
Calibration parse_calibration(const std::string& text, const std::string& name, const DeviceSpec& device);

}  // namespace layoutx::costmodel
