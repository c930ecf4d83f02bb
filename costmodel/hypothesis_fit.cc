#include "costmodel/hypothesis_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "costmodel/mixture.h"

namespace layoutx::costmodel {

namespace {

constexpr double kPi = 3.14159265358979323846;

std::vector<size_t> timing_indices(const std::vector<MeasurementRecord>& records) {
  std::vector<size_t> t;
  for (size_t i = 0; i < records.size(); ++i)
    if (records[i].kind == MeasurementRecord::Kind::kLayerTime) t.push_back(i);
  return t;
}

// The twins' group: a quantized graph's w8a16 and w4a16 builds share it; fp16 is its own.
std::string twin_key(const MeasurementRecord& r) {
  MeasurementRecord q = r;
  if (q.variant.precision() == model::Precision::kW4A16) q.variant.set(model::Precision::kW8A16);
  return graph_key(q);
}

double log_normal_density(double y, double mu, double sd) {
  const double z = (y - mu) / sd;
  return -0.5 * z * z - std::log(sd) - 0.5 * std::log(2 * kPi);
}

}  // namespace

std::vector<std::vector<bool>> loo_masks(const std::vector<MeasurementRecord>& records,
                                         const std::vector<size_t>& timings, bool group_twins) {
  std::vector<std::string> key(records.size()), group(records.size());
  for (size_t j = 0; j < records.size(); ++j) {
    key[j] = graph_key(records[j]);
    group[j] = twin_key(records[j]);
  }
  std::vector<std::vector<bool>> masks;
  for (size_t i : timings) {
    std::vector<bool> use(records.size(), true);
    for (size_t j = 0; j < records.size(); ++j) {
      // Out: the timing, the shares of its layer (their equations carry its measured total),
      // and with groups its twin and the twin's shares.
      const bool same = key[j] == key[i] || (group_twins && group[j] == group[i]);
      if (j == i || same) use[j] = false;
    }
    masks.push_back(use);
  }
  return masks;
}

HeldOut held_out(const std::vector<MeasurementRecord>& records, const DeviceSpec& device,
                 const std::vector<size_t>& timings, const std::vector<std::vector<bool>>& masks) {
  SubsetFits fits = fit_subsets(records, device, masks);
  HeldOut h;
  for (size_t t = 0; t < timings.size(); ++t) {
    const size_t i = timings[t];
    const Eigen::VectorXd row = fits.layer_row(t, i);
    h.record.push_back(i);
    h.measured_ms.push_back(records[i].ms);
    h.predicted_ms.push_back(row.dot(fits.theta[t]) / 1e3);
    h.rel_error.push_back((h.predicted_ms.back() - records[i].ms) / records[i].ms);
    h.sd_ms.push_back(std::sqrt(std::max(0.0, row.dot(fits.covariance[t] * row)) / 1e6));  // coefficient part
  }
  // Model error of each left-out timing: the rms relative error of the other timings.
  for (size_t t = 0; t < timings.size(); ++t) {
    double sq = 0;
    int n = 0;
    for (size_t u = 0; u < timings.size(); ++u)
      if (u != t) {
        sq += h.rel_error[u] * h.rel_error[u];
        ++n;
      }
    const double model_sd = (n ? std::sqrt(sq / n) : 0) * h.predicted_ms[t];
    const double meas_sd = records[timings[t]].sd * h.measured_ms[t];
    const double coef_sd = h.sd_ms[t];
    h.sd_ms[t] = std::sqrt(coef_sd * coef_sd + model_sd * model_sd + meas_sd * meas_sd);
    h.lpd.push_back(log_normal_density(h.measured_ms[t], h.predicted_ms[t], h.sd_ms[t]));
  }
  return h;
}

std::vector<double> share_lpd(const std::vector<MeasurementRecord>& records, const DeviceSpec& device) {
  std::vector<size_t> shares;
  for (size_t i = 0; i < records.size(); ++i)
    if (records[i].kind == MeasurementRecord::Kind::kOpShare) shares.push_back(i);
  if (shares.empty()) return {};
  std::vector<std::vector<bool>> masks;
  for (size_t i : shares) {
    masks.emplace_back(records.size(), true);
    masks.back()[i] = false;
  }
  SubsetFits fits = fit_subsets(records, device, masks);
  std::vector<double> predicted(shares.size()), coef_sd(shares.size()), error(shares.size());
  for (size_t k = 0; k < shares.size(); ++k) {
    const size_t i = shares[k];
    const double layer = fits.layer_rows[i].dot(fits.theta[k]);  // busy time: a share's denominator
    const double part = fits.rows[i].dot(fits.theta[k]);
    predicted[k] = layer > 0 ? part / layer : 0.0;
    coef_sd[k] = layer > 0 ? std::sqrt(std::max(0.0, fits.rows[i].dot(fits.covariance[k] * fits.rows[i]))) / layer : 0.0;
    error[k] = predicted[k] - records[i].share;
  }
  std::vector<double> lpd;
  for (size_t k = 0; k < shares.size(); ++k) {
    double sq = 0;
    for (size_t u = 0; u < shares.size(); ++u)
      if (u != k) sq += error[u] * error[u];
    const double model_sd = shares.size() > 1 ? std::sqrt(sq / static_cast<double>(shares.size() - 1)) : 0.0;
    const double own = records[shares[k]].sd;
    const double sd = std::sqrt(coef_sd[k] * coef_sd[k] + model_sd * model_sd + own * own);
    lpd.push_back(log_normal_density(records[shares[k]].share, predicted[k], sd));
  }
  return lpd;
}

std::vector<double> pointwise_lpd(const HeldOut& timings, const std::vector<MeasurementRecord>& records,
                                  const DeviceSpec& device) {
  std::vector<double> out = timings.lpd;
  const std::vector<double> shares = share_lpd(records, device);
  out.insert(out.end(), shares.begin(), shares.end());
  return out;
}

HypothesisSet fit_hypotheses(const std::vector<MeasurementRecord>& records, const DeviceSpec& device,
                             const std::vector<std::string>& data_files) {
  HypothesisSet set;
  std::vector<HypothesisSpec> specs = device.hypotheses.all();
  if (specs.empty()) {
    HypothesisSpec base;
    base.name = "base";
    base.claim = "the device spec as written";
    base.structure = device.structure;
    specs.push_back(std::move(base));
  }
  const std::vector<size_t> timings = timing_indices(records);
  const auto masks = loo_masks(records, timings, false);
  const auto group_masks = loo_masks(records, timings, true);
  std::vector<std::vector<double>> lpd;
  std::map<std::string, size_t> fitted;  // fit signature -> the first hypothesis fitted with it
  for (const HypothesisSpec& h : specs) {
    HypothesisFit f;
    f.spec = h;
    f.device = device.hypotheses.empty() ? device : with_hypothesis(device, h);
    // A hypothesis that prices every record alike as an earlier one (e.g. softmax-fused where no
    // explicit softmax was measured) fits identically: its fit is that one's, stamped as its own.
    const std::string sig = fit_signature(records, f.device);
    if (auto it = fitted.find(sig); it != fitted.end()) {
      const HypothesisFit& same = set.fits[it->second];
      f.report = same.report;
      restamp(f.report.calibration, records, f.device);
      f.loo = same.loo;
      f.group_loo = same.group_loo;
      f.elpd = same.elpd;
      lpd.push_back(lpd[it->second]);
      set.fits.push_back(std::move(f));
      continue;
    }
    fitted.emplace(sig, set.fits.size());
    f.report = calibrate(records, f.device, data_files);
    f.loo = held_out(records, f.device, timings, masks);
    f.group_loo = held_out(records, f.device, timings, group_masks);
    const std::vector<double> pointwise = pointwise_lpd(f.loo, records, f.device);
    f.elpd = std::accumulate(pointwise.begin(), pointwise.end(), 0.0);
    lpd.push_back(pointwise);
    set.fits.push_back(std::move(f));
  }
  const std::vector<double> w = pseudo_bma_plus_weights(lpd);
  for (size_t h = 0; h < set.fits.size(); ++h) set.fits[h].weight = w[h];
  return set;
}

}  // namespace layoutx::costmodel
