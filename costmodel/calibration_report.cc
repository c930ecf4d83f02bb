#include "costmodel/calibration_report.h"
#include "support/median.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "costmodel/mixture.h"
#include "costmodel/predictor.h"

namespace layoutx::costmodel {

namespace {

// The lower end of a latency's 90% interval, mean - half, clamped at 0 ms: a latency is never
// negative, and with few timings a held-out prediction's normal interval can reach far below
// zero ("[-327, 331] ms"). Clamped, not made log-normal, so the interval's upper end and the
// coverage figures (|predicted - measured| <= half) stay those of the normal interval the fit
// assumes, as the predictors' own intervals do (op_level_predictor.cc, hypothesis_predictor.cc).
double latency_low(double mean, double half) { return std::max(0.0, mean - half); }

HeldOutSummary summarize(const std::vector<double>& measured, const std::vector<double>& predicted,
                         const std::vector<double>& sd) {
  HeldOutSummary s;
  std::vector<double> abs_err, half;
  for (size_t i = 0; i < measured.size(); ++i) {
    const double e = (predicted[i] - measured[i]) / measured[i];
    abs_err.push_back(std::fabs(e));
    half.push_back(kZ90 * sd[i] / predicted[i]);
    s.covered += std::fabs(predicted[i] - measured[i]) <= kZ90 * sd[i];
  }
  s.count = static_cast<int>(measured.size());
  s.median_abs = median(abs_err);
  s.max_abs = abs_err.empty() ? 0 : *std::max_element(abs_err.begin(), abs_err.end());
  s.kendall_tau = kendall_tau(predicted, measured);
  s.median_half_width = median(half);
  return s;
}

// The weighted mixture of the hypotheses' held-out predictions of each timing.
void mix_held_out(const HypothesisSet& set, bool group, std::vector<double>& mean, std::vector<double>& sd) {
  const size_t n = (group ? set.fits.front().group_loo : set.fits.front().loo).measured_ms.size();
  std::vector<double> w;
  for (const auto& f : set.fits) w.push_back(f.weight);
  mean.assign(n, 0);
  sd.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    std::vector<double> mu, s;
    for (const auto& f : set.fits) {
      const HeldOut& h = group ? f.group_loo : f.loo;
      mu.push_back(h.predicted_ms[i]);
      s.push_back(h.sd_ms[i]);
    }
    const Mixture m = mix(w, mu, s);
    mean[i] = m.mean;
    sd[i] = m.sd;
  }
}

bool is_timing(const MeasurementRecord& m) { return m.kind == MeasurementRecord::Kind::kLayerTime; }

// The layout axes (precision aside) on which two variants differ.
std::vector<std::string> differing_axes(const model::Variant& a, const model::Variant& b) {
  std::vector<std::string> out;
  for (const std::string& axis : model::axis_names())
    if (axis != "precision" && model::axis_value(a, axis) != model::axis_value(b, axis)) out.push_back(axis);
  return out;
}

// A difference's label: across exports, the exports' names from the file ("roll -> score-join");
// within one export (or unnamed), the axes that changed ("gelu erf -> tanh").
std::string difference_label(const MeasurementRecord& a, const MeasurementRecord& b, const ExportNames& names) {
  const auto na = names.find(a.export_index), nb = names.find(b.export_index);
  if (a.export_index != b.export_index && na != names.end() && nb != names.end()) return na->second + " -> " + nb->second;
  std::string s;
  for (const std::string& axis : differing_axes(a.variant, b.variant))
    s += (s.empty() ? "" : ", ") + axis + " " + model::axis_value(a.variant, axis) + " -> " + model::axis_value(b.variant, axis);
  return s;
}

// The design history's differences of step k: each predicted timing against the timing it
// changed the fewest layout axes of, among those of the same model, layer, context and
// precision that came before it (an earlier export, or earlier in the same export's records);
// the first such on a tie. A timing with nothing before it has no difference.
std::vector<std::tuple<size_t, size_t, std::string>> history_pairs(const std::vector<MeasurementRecord>& records,
                                                                   const std::vector<size_t>& targets,
                                                                   const ExportNames& names) {
  std::vector<std::tuple<size_t, size_t, std::string>> pairs;  // (a, b, what)
  for (size_t i : targets) {
    const MeasurementRecord& b = records[i];
    int a = -1;
    size_t fewest = 0;
    for (size_t j = 0; j < records.size(); ++j) {
      const MeasurementRecord& m = records[j];
      const bool before = m.export_index > 0 && (m.export_index < b.export_index || (m.export_index == b.export_index && j < i));
      if (!is_timing(m) || !before || m.model != b.model || m.layer != b.layer || m.context != b.context ||
          m.variant.precision() != b.variant.precision())
        continue;
      const size_t n = differing_axes(m.variant, b.variant).size();
      if (a < 0 || n < fewest) a = static_cast<int>(j), fewest = n;
    }
    if (a >= 0) pairs.emplace_back(static_cast<size_t>(a), i, difference_label(records[static_cast<size_t>(a)], b, names));
  }
  return pairs;
}

// One hypothesis refitted on the fitted exports: its predictions of every record, the targets'
// sds, and the pairs' difference sds (coefficient covariance plus its LOO model error).
struct ReplayFit {
  std::vector<double> all_ms, target_sd, diff_sd_ms;
  std::vector<double> lpd;  // pointwise LOO densities within the fitted exports (its weight)
};

ReplayFit refit_for_replay(const HypothesisFit& f, const std::vector<MeasurementRecord>& records,
                           const std::vector<bool>& use, const std::vector<size_t>& targets,
                           const std::vector<std::tuple<size_t, size_t, std::string>>& pairs) {
  std::vector<MeasurementRecord> fitted;
  for (size_t i = 0; i < records.size(); ++i)
    if (use[i]) fitted.push_back(records[i]);
  std::vector<size_t> fitted_timings;
  for (size_t i = 0; i < fitted.size(); ++i)
    if (is_timing(fitted[i])) fitted_timings.push_back(i);
  ReplayFit r;
  // Weight and model error: this hypothesis's LOO within the fitted exports.
  const HeldOut ho = held_out(fitted, f.device, fitted_timings, loo_masks(fitted, fitted_timings, false));
  r.lpd = pointwise_lpd(ho, fitted, f.device);
  // The fit: a mask over all records (so the predicted export's rows are prepared too), and the
  // calibration of the fitted exports alone (its discrepancy: costmodel/discrepancy.h).
  SubsetFits fit = fit_subsets(records, f.device, {use});
  const Calibration cal = calibrate(fitted, f.device).calibration;
  std::vector<RowPrediction> at;  // each record's layer as this refit predicts it
  for (size_t i = 0; i < records.size(); ++i) at.push_back(predict_row(cal, f.device, fit.layer_rows[i]));
  for (size_t i = 0; i < records.size(); ++i) r.all_ms.push_back(at[i].ms);
  for (size_t i : targets) r.target_sd.push_back(at[i].sd_ms);
  for (const auto& [ia, ib, what] : pairs) {
    const Eigen::VectorXd d = at[ib].row - at[ia].row;
    const double coef = std::max(0.0, d.dot(cal.covariance * d)) / 1e6;
    const double model = std::max(at[ia].model_rel_sd, at[ib].model_rel_sd) * (r.all_ms[ib] - r.all_ms[ia]);
    r.diff_sd_ms.push_back(std::sqrt(coef + model * model));
  }
  return r;
}

// A pair's difference (b - a) / a under the replay weights, from each hypothesis's refit.
ReplayDifference replay_difference(const std::vector<MeasurementRecord>& records, const std::vector<ReplayFit>& fits,
                                   const std::vector<double>& weights, size_t ia, size_t ib, size_t k,
                                   std::vector<double>& per) {
  ReplayDifference d;
  d.a = records[ia].id;
  d.b = records[ib].id;
  d.measured = records[ib].ms / records[ia].ms - 1;
  double pa = 0, pb = 0;
  std::vector<double> per_sd;
  for (size_t h = 0; h < fits.size(); ++h) {
    pa += weights[h] * fits[h].all_ms[ia];
    pb += weights[h] * fits[h].all_ms[ib];
    per.push_back(fits[h].all_ms[ib] / fits[h].all_ms[ia] - 1);
    per_sd.push_back(fits[h].diff_sd_ms[k] / fits[h].all_ms[ia]);
  }
  d.predicted = pb / pa - 1;
  const Mixture m = mix(weights, per, per_sd);
  d.low = m.mean - kZ90 * m.sd;
  d.high = m.mean + kZ90 * m.sd;
  for (size_t h = 0; h < fits.size(); ++h) {
    const double p_down = normal_below_zero(per[h], per_sd[h]);
    d.p_measured_sign += weights[h] * (d.measured > 0 ? 1 - p_down : p_down);
  }
  return d;
}

// Step k of the replay: refit every hypothesis (and the weights) on the records of the exports
// before k only, predict export k's timings.
ReplayReport replay(const HypothesisSet& set, const std::vector<MeasurementRecord>& records, int k,
                    const ExportNames& names) {
  ReplayReport r;
  r.predicted_export = k;
  std::vector<bool> use(records.size());
  std::vector<size_t> targets;
  std::set<int> fitted_exports;
  for (size_t i = 0; i < records.size(); ++i) {
    const MeasurementRecord& m = records[i];
    use[i] = m.export_index > 0 && m.export_index < k;
    if (use[i]) fitted_exports.insert(m.export_index);
    if (use[i] && is_timing(m)) r.trained_on.push_back(m.id);
    if (m.export_index == k && is_timing(m)) targets.push_back(i);
  }
  r.fitted_exports.assign(fitted_exports.begin(), fitted_exports.end());
  const auto pairs = history_pairs(records, targets, names);
  std::vector<ReplayFit> fits;
  std::vector<std::vector<double>> lpd;
  for (const HypothesisFit& f : set.fits) {
    fits.push_back(refit_for_replay(f, records, use, targets, pairs));
    lpd.push_back(fits.back().lpd);
    std::vector<double> mu;
    for (size_t i : targets) mu.push_back(fits.back().all_ms[i]);
    r.per_hypothesis_ms.push_back(mu);
  }
  r.weights = pseudo_bma_plus_weights(lpd);
  for (size_t t = 0; t < targets.size(); ++t) {
    std::vector<double> mu, sd;
    for (size_t h = 0; h < fits.size(); ++h) {
      mu.push_back(fits[h].all_ms[targets[t]]);
      sd.push_back(fits[h].target_sd[t]);
    }
    const Mixture m = mix(r.weights, mu, sd);
    const MeasurementRecord& rec = records[targets[t]];
    r.rows.push_back({rec.id, rec.ms, m.mean, latency_low(m.mean, kZ90 * m.sd), m.mean + kZ90 * m.sd});
  }
  for (size_t p = 0; p < pairs.size(); ++p) {
    const auto& [ia, ib, what] = pairs[p];
    std::vector<double> per;
    r.differences.push_back(replay_difference(records, fits, r.weights, ia, ib, p, per));
    r.differences.back().what = what;
    r.per_hypothesis_difference.push_back(per);
  }
  return r;
}

}  // namespace

double kendall_tau(const std::vector<double>& x, const std::vector<double>& y) {
  double concordant = 0, discordant = 0, tx = 0, ty = 0;
  for (size_t i = 0; i < x.size(); ++i)
    for (size_t j = i + 1; j < x.size(); ++j) {
      const double a = x[i] - x[j], b = y[i] - y[j];
      if (a == 0 && b == 0) continue;
      if (a == 0) ++tx;
      else if (b == 0) ++ty;
      else if ((a > 0) == (b > 0)) ++concordant;
      else ++discordant;
    }
  const double denom = std::sqrt((concordant + discordant + tx) * (concordant + discordant + ty));
  return denom > 0 ? (concordant - discordant) / denom : 0;
}

CalibrationReport calibration_report(const HypothesisSet& set, const std::vector<MeasurementRecord>& records,
                                     const DeviceSpec& device, const ExportNames& names) {
  (void)device;
  CalibrationReport rep;
  for (const HypothesisFit& f : set.fits) {
    HypothesisReport h;
    h.name = f.spec.name;
    h.weight = f.weight;
    h.elpd = f.elpd;
    for (const FitRow& r : f.report.rows)
      if (r.record->kind == MeasurementRecord::Kind::kLayerTime)
        h.max_abs_resid_sd = std::max(h.max_abs_resid_sd, std::fabs(r.residual / r.sd));
    h.loo = summarize(f.loo.measured_ms, f.loo.predicted_ms, f.loo.sd_ms);
    h.group_loo = summarize(f.group_loo.measured_ms, f.group_loo.predicted_ms, f.group_loo.sd_ms);
    rep.hypotheses.push_back(h);
  }
  // Combined: the mixture of every hypothesis's held-out predictions, weights from all data
  // (slightly optimistic: the weights saw the timing left out).
  const HeldOut& any = set.fits.front().loo;
  std::vector<double> mean, sd, gmean, gsd;
  mix_held_out(set, false, mean, sd);
  mix_held_out(set, true, gmean, gsd);
  rep.combined.name = "combined";
  rep.combined.weight = 1;
  for (size_t i = 0; i < any.record.size(); ++i) {
    double fitted = 0, var = 0;
    for (const HypothesisFit& f : set.fits)
      for (const FitRow& r : f.report.rows)
        if (r.record == &records[any.record[i]]) {
          fitted += f.weight * r.fitted;
          var = r.sd * r.sd;
        }
    rep.combined.max_abs_resid_sd = std::max(rep.combined.max_abs_resid_sd, std::fabs(fitted - any.measured_ms[i]) / std::sqrt(var));
    rep.ids.push_back(records[any.record[i]].id);
  }
  rep.combined.loo = summarize(any.measured_ms, mean, sd);
  rep.combined.group_loo = summarize(any.measured_ms, gmean, gsd);
  rep.measured_ms = any.measured_ms;
  rep.loo_ms = mean;
  rep.group_loo_ms = gmean;
  for (size_t i = 0; i < mean.size(); ++i) {
    rep.loo_low_ms.push_back(latency_low(mean[i], kZ90 * sd[i]));
    rep.loo_high_ms.push_back(mean[i] + kZ90 * sd[i]);
  }
  // The replay: one step per export after the first the records name.
  std::set<int> exports;
  for (const MeasurementRecord& m : records)
    if (m.export_index > 0) exports.insert(m.export_index);
  for (int k : exports)
    if (k != *exports.begin()) rep.replays.push_back(replay(set, records, k, names));
  return rep;
}

ReplayCoverage replay_coverage(const std::vector<ReplayReport>& replays) {
  ReplayCoverage c;
  std::vector<double> errors;
  for (const ReplayReport& r : replays) {
    for (const ReplayRow& row : r.rows) {
      ++c.timings;
      c.inside += row.measured_ms >= row.low_ms && row.measured_ms <= row.high_ms;
      errors.push_back(std::abs(row.predicted_ms / row.measured_ms - 1));
    }
    for (const ReplayDifference& d : r.differences) {
      ++c.differences;
      c.signs_right += (d.measured > 0) == (d.predicted > 0);
    }
  }
  c.median_abs_error = median(errors);
  return c;
}

}  // namespace layoutx::costmodel
