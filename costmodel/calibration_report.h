// The calibration report of a hypothesis set: for each hypothesis and for the weighted
// combination, in-sample residuals in sd, leave-one-out and group leave-one-out errors (the
// w8a16 and w4a16 builds of one graph out together), Kendall tau of the held-out predictions
// against the measurements, 90% interval coverage of the held-out timings, the replay of the
// design history (for each export k the records name after their first: fit on the exports
// before k, predict export k's timings).
#pragma once
#include <string>
#include <vector>

#include "costmodel/hypothesis_fit.h"

namespace layoutx::costmodel {

struct HeldOutSummary {
  double median_abs = 0, max_abs = 0;  // relative errors
  double kendall_tau = 0;              // tau-b of predicted vs measured
  int covered = 0, count = 0;          // inside the 90% predictive interval
  double median_half_width = 0;        // relative half-width of those intervals
};

struct ReplayRow {
  std::string id;
  double measured_ms = 0, predicted_ms = 0, low_ms = 0, high_ms = 0;
};
// A difference of the design history: (b - a) / a, measured and predicted; the predicted one's
// 90% interval and the probability it has the measured sign, from the mixture of the
// hypotheses' differences (each: its coefficients' covariance on the two rows' difference and
// its model error on the difference), so hypotheses that disagree on the sign show as doubt.
struct ReplayDifference {
  std::string what, a, b;
  double measured = 0, predicted = 0;
  double low = 0, high = 0;
  double p_measured_sign = 0;
};

// One step of the replay: fitted on the records of the exports before `predicted_export`
// (`fitted_exports`, ascending), predicting that export's timings.
struct ReplayReport {
  int predicted_export = 0;
  std::vector<int> fitted_exports;
  std::vector<std::string> trained_on;  // ids of the timings fitted on
  std::vector<ReplayRow> rows;          // per hypothesis set: the combined prediction
  std::vector<ReplayDifference> differences;
  // The same per hypothesis: predicted_ms[h][k] of rows[k]; differences[h][k].
  std::vector<std::vector<double>> per_hypothesis_ms;
  std::vector<std::vector<double>> per_hypothesis_difference;
  std::vector<double> weights;  // the weights refitted on the fitted exports alone
};

struct HypothesisReport {
  std::string name;
  double weight = 0, elpd = 0;
  double max_abs_resid_sd = 0;  // in-sample, over the layer timings
  HeldOutSummary loo, group_loo;
};

struct CalibrationReport {
  std::vector<HypothesisReport> hypotheses;
  HypothesisReport combined;  // the weighted mixture of the hypotheses' held-out predictions
  // The combined held-out predictions per timing (ordinary LOO), for the table.
  std::vector<std::string> ids;
  std::vector<double> measured_ms, loo_ms, loo_low_ms, loo_high_ms, group_loo_ms;
  // One step per export after the first the records name (MeasurementRecord::export_index),
  // ascending; empty when they name fewer than two (no history to replay).
  std::vector<ReplayReport> replays;
};


// Kendall's tau-b of two equally long series.
double kendall_tau(const std::vector<double>& x, const std::vector<double>& y);

// `names`: the exports' names (the measurement file's `exports:`), for the replay's labels.
CalibrationReport calibration_report(const HypothesisSet& set, const std::vector<MeasurementRecord>& records,
                                     const DeviceSpec& device, const ExportNames& names = {});

// The replays' summary: timings inside their 90% intervals, the median |relative error|, and the
// differences predicted with the measured sign.
struct ReplayCoverage {
  int timings = 0, inside = 0, differences = 0, signs_right = 0;
  double median_abs_error = 0;
};
ReplayCoverage replay_coverage(const std::vector<ReplayReport>& replays);

}  // namespace layoutx::costmodel
