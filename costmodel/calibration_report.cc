#include "costmodel/calibration_report.h"

#include <algorithm>
#include <cmath>

#include "costmodel/mixture.h"
#include "costmodel/predictor.h"

namespace layoutx::costmodel {

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

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

// The replay: refit every hypothesis (and the weights) on the first export's records only
// (every record but the second export's: join=scores), predict the second export's timings.
ReplayReport replay(const HypothesisSet& set, const std::vector<MeasurementRecord>& records) {
  ReplayReport r;
  auto second = [](const MeasurementRecord& m) { return m.variant.join() == model::Join::kScores; };
  std::vector<MeasurementRecord> first;
  for (const auto& m : records)
    if (!second(m)) first.push_back(m);
  for (const auto& m : first)
    if (m.kind == MeasurementRecord::Kind::kLayerTime) r.trained_on.push_back(m.id);
  // Fit on the first export: a mask over all records (so the second's rows are prepared too).
  std::vector<bool> use(records.size());
  for (size_t i = 0; i < records.size(); ++i) use[i] = !second(records[i]);
  std::vector<size_t> targets;
  for (size_t i = 0; i < records.size(); ++i)
    if (second(records[i]) && records[i].kind == MeasurementRecord::Kind::kLayerTime) targets.push_back(i);
  // The design history's differences: each second-export timing against the record it changed
  // one axis of (score-join vs roll at the same layer and precision; tanh vs erf score-join).
  auto find = [&](auto pred) -> int {
    for (size_t i = 0; i < records.size(); ++i)
      if (records[i].kind == MeasurementRecord::Kind::kLayerTime && pred(records[i])) return static_cast<int>(i);
    return -1;
  };
  std::vector<std::tuple<size_t, size_t, std::string>> pairs;  // (a, b, what)
  for (size_t i : targets) {
    const MeasurementRecord& b = records[i];
    int a = -1;
    std::string what;
    if (b.variant.gelu() == model::GeluForm::kTanh) {
      a = find([&](const MeasurementRecord& m) {
        model::Variant v = b.variant;
        v.set(model::GeluForm::kErf);
        return m.layer == b.layer && m.context == b.context && m.variant == v;
      });
      what = "gelu erf -> tanh";
    } else {
      a = find([&](const MeasurementRecord& m) {
        return m.layer == b.layer && m.context == b.context && m.variant.join() == model::Join::kKeys &&
               m.variant.precision() == b.variant.precision();
      });
      what = "roll -> score-join";
    }
    if (a >= 0) pairs.emplace_back(static_cast<size_t>(a), i, what);
  }
  // The weights on the first export alone: its LOO densities (timings and shares).
  std::vector<size_t> first_timings;
  for (size_t i = 0; i < first.size(); ++i)
    if (first[i].kind == MeasurementRecord::Kind::kLayerTime) first_timings.push_back(i);
  const auto first_masks = loo_masks(first, first_timings, false);
  std::vector<std::vector<double>> lpd;
  std::vector<std::vector<double>> mu_all, sd_all;  // [h][target]
  std::vector<std::vector<double>> pred_by_record;  // [h][record]: the first-export fit's prediction of every record
  std::vector<std::vector<double>> diff_sd_ms;      // [h][pair]: sd of the pair's predicted difference (ms)
  for (const HypothesisFit& f : set.fits) {
    // Weight and model error: this hypothesis's LOO within the first export.
    const HeldOut ho = held_out(first, f.device, first_timings, first_masks);
    lpd.push_back(pointwise_lpd(ho, first, f.device));
    SubsetFits fit = fit_subsets(records, f.device, {use});
    double sq = 0;
    for (double e : ho.rel_error) sq += e * e;
    const double model_rel = std::sqrt(sq / std::max<size_t>(1, ho.rel_error.size()));
    std::vector<double> mu, sd, all;
    for (size_t i = 0; i < records.size(); ++i) all.push_back(fit.layer_rows[i].dot(fit.theta[0]) / 1e3);
    for (size_t i : targets) {
      const Eigen::VectorXd& row = fit.layer_rows[i];
      const double m = all[i];
      const double coef = std::max(0.0, row.dot(fit.covariance[0] * row)) / 1e6;
      mu.push_back(m);
      sd.push_back(std::sqrt(coef + (model_rel * m) * (model_rel * m)));
    }
    mu_all.push_back(mu);
    sd_all.push_back(sd);
    std::vector<double> dsd;
    for (const auto& [ia, ib, what] : pairs) {
      const Eigen::VectorXd d = fit.layer_rows[ib] - fit.layer_rows[ia];
      const double coef = std::max(0.0, d.dot(fit.covariance[0] * d)) / 1e6;
      const double model = model_rel * (all[ib] - all[ia]);
      dsd.push_back(std::sqrt(coef + model * model));
    }
    diff_sd_ms.push_back(dsd);
    pred_by_record.push_back(all);
  }
  r.weights = pseudo_bma_plus_weights(lpd);
  for (size_t k = 0; k < targets.size(); ++k) {
    std::vector<double> mu, sd;
    for (size_t h = 0; h < set.fits.size(); ++h) {
      mu.push_back(mu_all[h][k]);
      sd.push_back(sd_all[h][k]);
    }
    const Mixture m = mix(r.weights, mu, sd);
    r.rows.push_back({records[targets[k]].id, records[targets[k]].ms, m.mean, m.mean - kZ90 * m.sd, m.mean + kZ90 * m.sd});
  }
  r.per_hypothesis_ms = mu_all;
  for (size_t k = 0; k < pairs.size(); ++k) {
    const auto& [ia, i, what] = pairs[k];
    ReplayDifference d;
    d.what = what;
    d.a = records[ia].id;
    d.b = records[i].id;
    d.measured = records[i].ms / records[ia].ms - 1;
    double pa = 0, pb = 0;
    std::vector<double> per, per_sd;
    for (size_t h = 0; h < set.fits.size(); ++h) {
      pa += r.weights[h] * pred_by_record[h][ia];
      pb += r.weights[h] * pred_by_record[h][i];
      per.push_back(pred_by_record[h][i] / pred_by_record[h][ia] - 1);
      per_sd.push_back(diff_sd_ms[h][k] / pred_by_record[h][ia]);
    }
    d.predicted = pb / pa - 1;
    const Mixture m = mix(r.weights, per, per_sd);
    d.low = m.mean - kZ90 * m.sd;
    d.high = m.mean + kZ90 * m.sd;
    for (size_t h = 0; h < set.fits.size(); ++h) {
      const double p_down = normal_below_zero(per[h], per_sd[h]);
      d.p_measured_sign += r.weights[h] * (d.measured > 0 ? 1 - p_down : p_down);
    }
    r.differences.push_back(d);
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
                                     const DeviceSpec& device) {
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
    rep.loo_low_ms.push_back(mean[i] - kZ90 * sd[i]);
    rep.loo_high_ms.push_back(mean[i] + kZ90 * sd[i]);
  }
  rep.replay = replay(set, records);
  return rep;
}

}  // namespace layoutx::costmodel
