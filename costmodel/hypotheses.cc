#include "costmodel/hypotheses.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <optional>
#include <ostream>
#include <random>
#include <sstream>

#include "costmodel/hypotheses_document.h"
#include "support/atomic_file.h"
#include "support/error.h"
#include "support/hash.h"
#include "support/paths.h"
#include "support/yaml_reader.h"

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

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

std::vector<size_t> kept_hypotheses(const std::vector<double>& weights, double share) {
  std::vector<size_t> order(weights.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return weights[a] > weights[b]; });
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<size_t> kept;
  double mass = 0;
  for (size_t h : order) {
    if (!kept.empty() && share < 1 && mass >= share * total) break;
    kept.push_back(h);
    mass += weights[h];
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

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
    const Eigen::VectorXd& row = fits.layer_rows[i];
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
    const double layer = fits.layer_rows[i].dot(fits.theta[k]);
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

std::vector<double> pseudo_bma_plus_weights(const std::vector<std::vector<double>>& lpd, int draws, uint64_t seed) {
  const size_t H = lpd.size();
  std::vector<double> w(H, 0.0);
  if (H == 0) return w;
  const size_t n = lpd.front().size();
  std::mt19937_64 rng(seed);
  std::gamma_distribution<double> gamma(1.0, 1.0);
  std::vector<double> alpha(n), elpd(H);
  for (int d = 0; d < draws; ++d) {
    double sum = 0;
    for (double& a : alpha) sum += (a = gamma(rng));  // Dirichlet(1, ..., 1) via gammas
    for (size_t h = 0; h < H; ++h) {
      elpd[h] = 0;
      for (size_t i = 0; i < n; ++i) elpd[h] += static_cast<double>(n) * alpha[i] / sum * lpd[h][i];
    }
    const double top = *std::max_element(elpd.begin(), elpd.end());
    double z = 0;
    for (size_t h = 0; h < H; ++h) z += std::exp(elpd[h] - top);
    for (size_t h = 0; h < H; ++h) w[h] += std::exp(elpd[h] - top) / z / draws;
  }
  return w;
}

Mixture mix(const std::vector<double>& w, const std::vector<double>& mu, const std::vector<double>& sd) {
  Mixture m;
  double second = 0;
  for (size_t h = 0; h < w.size(); ++h) {
    m.mean += w[h] * mu[h];
    second += w[h] * (sd[h] * sd[h] + mu[h] * mu[h]);
  }
  m.sd = std::sqrt(std::max(0.0, second - m.mean * m.mean));
  return m;
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
  for (const HypothesisSpec& h : specs) {
    HypothesisFit f;
    f.spec = h;
    f.device = device.hypotheses.empty() ? device : with_hypothesis(device, h);
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

HypothesisPredictor::HypothesisPredictor(std::vector<std::string> names, std::vector<double> weights,
                                         std::vector<std::unique_ptr<OpLevelPredictor>> members)
    : names_(std::move(names)), weights_(std::move(weights)), members_(std::move(members)) {
  if (members_.empty() || members_.size() != weights_.size() || names_.size() != weights_.size())
    throw Error("hypotheses: need one name and weight per calibrated hypothesis");
  const double total = std::accumulate(weights_.begin(), weights_.end(), 0.0);
  if (!(total > 0)) throw Error("hypotheses: the weights sum to zero");
  for (double& w : weights_) w /= total;
  std::string ident;
  size_t at = 0;
  for (size_t h = 0; h < members_.size(); ++h) {
    offset_.push_back(at);
    at += static_cast<size_t>(members_[h]->calibration().theta.size());
    ident += members_[h]->calibration_id() + ":" + num(weights_[h]) + " ";
  }
  offset_.push_back(at);
  weighted_theta_.resize(static_cast<Eigen::Index>(at));
  for (size_t h = 0; h < members_.size(); ++h) {
    const Eigen::VectorXd& theta = members_[h]->calibration().theta;
    weighted_theta_.segment(static_cast<Eigen::Index>(offset_[h]), theta.size()) = weights_[h] * theta / 1e3;
  }
  for (size_t h = 0; h < members_.size(); ++h) {
    const Calibration& c = members_[h]->calibration();
    size_t j = 0;
    while (j < h && !fitted_identically(members_[j]->calibration(), c)) ++j;
    twin_.push_back(j);
  }
  // An 8-hex id of the members' ids and weights.
  id_ = hex(fnv1a(ident), 8);
}

std::vector<HypothesisFigure> HypothesisPredictor::predict_each(const model::LayerGraph& graph) const {
  std::vector<HypothesisFigure> out;
  out.reserve(members_.size());
  for (size_t h = 0; h < members_.size(); ++h) out.push_back({names_[h], weights_[h], members_[h]->predict(graph)});
  // (each member's full prediction: floor and legality included, for `predict --hypotheses`)
  return out;
}

Prediction HypothesisPredictor::combine(std::vector<Prediction>& each, const std::vector<std::vector<double>>& op_ms,
                                        const std::vector<double>& weights, const std::vector<size_t>& group,
                                        const std::vector<LayerFeatures>& features) const {
  Prediction p;
  std::vector<double> mu, sd;
  for (size_t h = 0; h < each.size(); ++h) {
    mu.push_back(each[h].latency_ms);
    sd.push_back((each[h].high_ms - each[h].latency_ms) / kZ90);
  }
  const Mixture m = mix(weights, mu, sd);
  p.latency_ms = m.mean;
  p.low_ms = std::max(0.0, m.mean - kZ90 * m.sd);
  p.high_ms = m.mean + kZ90 * m.sd;
  p.interval_level = each.front().interval_level;
  p.calibration_id = id_;
  // Ops: the weighted sum of each hypothesis's op costs by name, in the first hypothesis's
  // order (an op another hypothesis has alone goes after the op it follows there); sums to
  // latency_ms.
  p.ops = std::move(each.front().ops);
  for (OpCost& c : p.ops) c.ms *= weights.front();
  const size_t first = p.ops.size();
  constexpr size_t kAtFront = static_cast<size_t>(-1);
  std::vector<size_t> after;  // an added op (p.ops[first + j]): the first hypothesis's op it follows
  static const std::string kGraph = "graph";
  for (size_t h = 1; h < each.size(); ++h) {
    const std::vector<LoweredOp>& ops = features[group[h]].ops;
    const bool same_ops = group[h] == group.front();
    // Both lists are in the graph's op order (a folded softmax is one op named as its first),
    // so each op is looked for from just after the previous match, then from the start; ops
    // of the first hypothesis's own featurization are at the same index.
    size_t next = 0, last_first = kAtFront;
    for (size_t i = 0; i < op_ms[h].size(); ++i) {
      const double ms = op_ms[h][i];
      if (i == ops.size() && ms == 0) continue;  // no graph-level cost
      size_t at = p.ops.size();
      if (same_ops && i < ops.size()) {
        at = i;
      } else {
        const std::string& name = i < ops.size() ? ops[i].name : kGraph;
        for (size_t k = next; k < p.ops.size() && at == p.ops.size(); ++k)
          if (p.ops[k].name == name) at = k;
        for (size_t k = 0; k < next && at == p.ops.size(); ++k)
          if (p.ops[k].name == name) at = k;
        if (at == p.ops.size()) {
          if (i < ops.size()) p.ops.push_back({name, kind_text(ops[i]), to_string(ops[i].op_class), 0.0});
          else p.ops.push_back({name, "Graph", "graph", 0.0});
          after.push_back(last_first);
        }
      }
      p.ops[at].ms += weights[h] * ms;
      if (at < first) last_first = at;
      next = at + 1;
    }
  }
  if (!after.empty()) {  // the added ops into place
    std::vector<OpCost> ordered;
    ordered.reserve(p.ops.size());
    auto added_after = [&](size_t k) {
      for (size_t j = 0; j < after.size(); ++j)
        if (after[j] == k) ordered.push_back(std::move(p.ops[first + j]));
    };
    added_after(kAtFront);
    for (size_t k = 0; k < first; ++k) {
      ordered.push_back(std::move(p.ops[k]));
      added_after(k);
    }
    p.ops = std::move(ordered);
  }
  return p;
}

namespace {

// The structure as it matters for one graph's featurization: switches that change nothing in it
// are cleared (4-bit handling off a w4a16 graph, softmax folding in a graph with the fused op),
// so hypotheses that differ only there share one featurization. Exact: featurize_layer reads the
// switches only where they apply. The VTCM knee is left out (any budget: 1): it only sets the
// spill and stall features from the live set, applied per member (knee_effect).
// `reads_cache_in_place`: whether the graph has a cache input that an op other than a copy
// reads (cache_inputs_read_in_place), asked only when a structure re-lays them.
template <class ReadsInPlace>
Structure effective_structure(Structure s, const model::LayerGraph& g, ReadsInPlace&& reads_cache_in_place) {
  if (g.variant.precision() != model::Precision::kW4A16) s.w4_weights = W4Weights::kPacked;
  if (g.variant.softmax() == model::SoftmaxForm::kFused) s.fuse_explicit_softmax = false;
  if (s.relayout_cache_inputs && !reads_cache_in_place(s.live_min_kb)) s.relayout_cache_inputs = false;
  if (s.vtcm_budget_mb > 0) s.vtcm_budget_mb = 1;
  return s;
}

// What a member's VTCM knee makes of a featurization, as its design row sees it: the spill bytes
// if it prices them, else only whether the live set is over the knee (the stall's switch).
std::pair<bool, double> knee_effect(const LayerFeatures& f, const DeviceSpec& d) {
  const double spill = spill_bytes(f, d.structure.vtcm_budget_mb);
  const bool per_byte = d.graph_index(Term::kSpill, f.precision) >= 0;
  return {per_byte, per_byte ? spill : (spill > 0 ? 1.0 : 0.0)};
}

}  // namespace

Prediction HypothesisPredictor::predict(const model::LayerGraph& graph) const {
  // Featurize once per structure that differs for this graph and price each distinct
  // (structure, calibration) once; then the floor and the legality of the graph once (they do
  // not depend on the hypothesis).
  std::vector<Structure> structures;
  std::vector<LayerFeatures> features;
  std::vector<std::pair<bool, double>> knees;  // features[k]'s knee_effect
  std::vector<size_t> group(members_.size());
  std::vector<Prediction> each;
  std::vector<double> weights;
  std::vector<size_t> priced(members_.size());  // member -> index into each
  std::vector<size_t> each_group;                // each -> its featurization
  std::vector<std::vector<double>> op_ms;        // each -> its ops' costs (each[0]: in its ops)
  std::optional<std::pair<double, bool>> reads_in_place;  // (live_min_kb, answer), asked once
  // (at most one entry per member each)
  structures.reserve(members_.size());
  features.reserve(members_.size());
  knees.reserve(members_.size());
  each.reserve(members_.size());
  weights.reserve(members_.size());
  op_ms.reserve(members_.size());
  each_group.reserve(members_.size());
  std::vector<Structure> eff;  // each member's effective structure for this graph
  eff.reserve(members_.size());
  for (size_t h = 0; h < members_.size(); ++h) {
    const DeviceSpec& d = members_[h]->device_spec();
    eff.push_back(effective_structure(d.structure, graph, [&](double live_min_kb) {
      if (!reads_in_place || reads_in_place->first != live_min_kb)
        reads_in_place.emplace(live_min_kb, !cache_inputs_read_in_place(graph, d.channel_pad, live_min_kb).empty());
      return reads_in_place->second;
    }));
  }
  // One featurization per distinct effective structure, with the knee of the first member that
  // has it. Structures that differ only in relayout_cache_inputs share one lowering and op
  // featurization (featurize_ops); each finishes its own copy (re-laid copies, live set), the
  // last of them taking it by move.
  std::vector<size_t> first_member;                    // structures[i]'s
  std::vector<size_t> structure_of(members_.size());  // member -> its index in structures
  for (size_t h = 0; h < members_.size(); ++h) {
    structure_of[h] = static_cast<size_t>(std::find(structures.begin(), structures.end(), eff[h]) - structures.begin());
    if (structure_of[h] == structures.size()) {
      structures.push_back(eff[h]);
      first_member.push_back(h);
    }
  }
  const size_t distinct = structures.size();
  auto same_ops = [](Structure a, Structure b) {
    a.relayout_cache_inputs = b.relayout_cache_inputs = false;
    return a == b;
  };
  std::vector<std::optional<LayerFeatures>> ops(distinct);  // at the first structure of its kind
  for (size_t i = 0; i < distinct; ++i) {
    const DeviceSpec& d = members_[first_member[i]]->device_spec();
    size_t j = 0;
    while (!same_ops(structures[j], structures[i])) ++j;
    if (!ops[j]) ops[j] = featurize_ops(graph, d);
    bool last = true;
    for (size_t k = i + 1; k < distinct && last; ++k) last = !same_ops(structures[k], structures[i]);
    LayerFeatures f = last ? std::move(*ops[j]) : *ops[j];
    finish_layer_features(f, graph, d);  // with d's own knee applied
    knees.push_back(knee_effect(f, d));
    features.push_back(std::move(f));
  }
  for (size_t h = 0; h < members_.size(); ++h) {
    const DeviceSpec& d = members_[h]->device_spec();
    const Structure& s = eff[h];
    // Its structure's featurization; a copy with the member's knee applied where the knee
    // changes what its row sees.
    const size_t b = structure_of[h];
    const std::pair<bool, double> knee = knee_effect(features[b], d);
    size_t k = b;
    while (k < structures.size() && !(structures[k] == s && knees[k] == knee)) ++k;
    if (k == structures.size()) {
      structures.push_back(s);
      features.push_back(features[b]);
      apply_vtcm_budget(features.back(), d.structure.vtcm_budget_mb);
      knees.push_back(knee);
    }
    group[h] = k;
    // An earlier member with the same calibration and the same featurization has priced it.
    size_t j = 0;
    while (j < h && !(twin_[j] == twin_[h] && group[j] == k)) ++j;
    if (j < h) {
      weights[priced[j]] += weights_[h];
      priced[h] = priced[j];
      continue;
    }
    priced[h] = each.size();
    op_ms.emplace_back();
    each.push_back(members_[h]->price(features[k], each.empty() ? nullptr : &op_ms.back()));
    each_group.push_back(k);
    weights.push_back(weights_[h]);
  }
  const std::vector<LoweredOp>* unfused = nullptr;  // a lowering of the graph as written
  for (size_t k = 0; k < structures.size(); ++k)
    if (!structures[k].fuse_explicit_softmax) unfused = &features[k].ops;
  Prediction p = combine(each, op_ms, weights, each_group, features);
  p.design_row.reserve(offset_.back());
  for (size_t h = 0; h < members_.size(); ++h)
    p.design_row.insert(p.design_row.end(), each[priced[h]].design_row.begin(), each[priced[h]].design_row.end());
  p.floor_ms = members_.front()->floor_ms(graph);
  p.legality = unfused ? members_.front()->legality(graph, *unfused) : members_.front()->legality(graph);
  return p;
}

double HypothesisPredictor::latency_from_row(const std::vector<double>& row) const {
  return Eigen::Map<const Eigen::VectorXd>(row.data(), weighted_theta_.size()).dot(weighted_theta_);
}

std::optional<CoefficientBelief> HypothesisPredictor::belief() const {
  CoefficientBelief b;
  const size_t n = offset_.back();
  b.mean.assign(n, 0.0);
  b.covariance.assign(n * n, 0.0);
  for (size_t h = 0; h < members_.size(); ++h) {
    const Calibration& c = members_[h]->calibration();
    const double w = weights_[h];
    for (Eigen::Index i = 0; i < c.theta.size(); ++i) {
      b.mean[offset_[h] + i] = w * c.theta[i];
      for (Eigen::Index j = 0; j < c.theta.size(); ++j)
        b.covariance[(offset_[h] + i) * n + offset_[h] + j] = w * w * c.covariance(i, j);
    }
    b.noise_rel_sd += w * c.model_rel_sd;
  }
  return b;
}

std::vector<BeliefComponent> HypothesisPredictor::belief_components() const {
  std::vector<BeliefComponent> out;
  for (size_t h = 0; h < members_.size(); ++h) out.push_back({weights_[h], offset_[h], *members_[h]->belief()});
  return out;
}

std::vector<std::pair<std::string, std::vector<double>>> HypothesisPredictor::class_rows(
    const model::LayerGraph& graph) const {
  std::vector<std::pair<std::string, std::vector<double>>> out;
  for (size_t h = 0; h < members_.size(); ++h)
    for (const auto& row : members_[h]->class_rows(graph)) {
      // (Not a structured binding: clang 14, which builds the fuzzers, cannot capture one.)
      auto it = std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == row.first; });
      if (it == out.end()) it = out.insert(out.end(), {row.first, std::vector<double>(offset_.back(), 0.0)});
      std::copy(row.second.begin(), row.second.end(), it->second.begin() + static_cast<std::ptrdiff_t>(offset_[h]));
    }
  return out;
}

bool HypothesisPredictor::member_differences(const Prediction& a, const Prediction& b, std::vector<double>& mu,
                                             std::vector<double>& sd) const {
  if (a.design_row.size() != offset_.back() || b.design_row.size() != offset_.back()) return false;
  mu.assign(members_.size(), 0.0);
  sd.assign(members_.size(), 0.0);
  for (size_t h = 0; h < members_.size(); ++h) {
    const Calibration& c = members_[h]->calibration();
    const Eigen::Index n = c.theta.size();
    Eigen::Map<const Eigen::VectorXd> ra(a.design_row.data() + offset_[h], n), rb(b.design_row.data() + offset_[h], n);
    const Eigen::VectorXd d = ra - rb;
    const double da = ra.dot(c.theta) / 1e3, db = rb.dot(c.theta) / 1e3;
    const double coef_var = std::max(d.dot(c.covariance * d), 0.0) / 1e6;
    const double model_sd = c.model_rel_sd * std::abs(da - db);
    mu[h] = da - db;
    sd[h] = std::sqrt(coef_var + model_sd * model_sd);
  }
  return true;
}

double HypothesisPredictor::difference_half_width_ms(const Prediction& a, const Prediction& b) const {
  std::vector<double> mu, sd;
  if (!member_differences(a, b, mu, sd)) return Predictor::difference_half_width_ms(a, b);
  // The mixture of the hypotheses' differences: their disagreement (even on its sign) widens it.
  return kZ90 * mix(weights_, mu, sd).sd;
}

double HypothesisPredictor::probability_faster(const Prediction& a, const Prediction& b) const {
  std::vector<double> mu, sd;
  if (!member_differences(a, b, mu, sd)) return Predictor::probability_faster(a, b);
  // Exact for the mixture: each hypothesis's own P(a - b < 0), weighted.
  double p = 0;
  for (size_t h = 0; h < members_.size(); ++h) p += weights_[h] * normal_below_zero(mu[h], sd[h]);
  return std::clamp(p, 0.0, 1.0);
}

std::unique_ptr<HypothesisPredictor> make_predictor(const HypothesisSet& set, const DeviceSpec& device, double mass) {
  return make_predictor(set, load_device_rules(device), mass);
}

std::unique_ptr<HypothesisPredictor> make_predictor(const HypothesisSet& set, const RuleSet& rules, double mass) {
  std::vector<std::string> names;
  std::vector<double> weights;
  std::vector<std::unique_ptr<OpLevelPredictor>> members;
  std::vector<double> all;
  for (const HypothesisFit& f : set.fits) all.push_back(f.weight);
  for (size_t h : kept_hypotheses(all, mass)) {
    const HypothesisFit& f = set.fits[h];
    names.push_back(f.spec.name);
    weights.push_back(f.weight);
    members.push_back(std::make_unique<OpLevelPredictor>(f.device, f.report.calibration, rules));
  }
  return std::make_unique<HypothesisPredictor>(std::move(names), std::move(weights), std::move(members));
}

std::string hypotheses_source_hash(const std::vector<std::string>& file_bytes, const DeviceSpec& device) {
  // The base device's definition is in source_hash; each hypothesis adds its own definition.
  std::string defs;
  for (const HypothesisSpec& h : device.hypotheses) {
    defs += "hypothesis " + h.name + " " + to_text(h.structure) + " drop";
    for (const std::string& d : h.drop) defs += " " + d;
    for (const CoefficientSpec& k : h.add) {
      defs += " add " + k.name + " " + to_string(k.term) + " " + num(k.prior) + " " + num(k.rel_sd) + " " + num(k.min_value);
      for (OpClass c : k.classes) defs += std::string(" ") + to_string(c);
      for (model::Precision p : k.precisions) defs += std::string(" ") + model::to_string(p);
    }
    defs += "\n";
  }
  defs += "weights " + HypothesisSet{}.method + "\n";  // a new weighting makes saved weights stale
  std::vector<std::string> all = file_bytes;
  all.push_back(defs);
  return source_hash(all, device);
}

void save_hypotheses(const HypothesisSet& set, const std::string& source, const std::string& path) {
  write_file_atomically(path, hypotheses_document(set, kPredictorWeightMass, source));
}

std::unique_ptr<HypothesisPredictor> load_shipped_hypothesis_predictor(const DeviceSpec& device, std::ostream& log,
                                                                       bool* refitted) {
  if (refitted) *refitted = false;
  if (device.calibration.measurements.empty())
    throw Error(device.source + ": calibration.measurements: device " + device.name +
                " names no measurements to fit its hypotheses on");
  const std::string data_path = device_file(device.calibration.measurements);
  const std::string index_path = device_file(device.calibration.hypotheses);
  const std::string data_bytes = read_text_file(data_path);
  try {
    if (index_path.empty()) throw Error(device.source + ": calibration.hypotheses: none saved");
    const std::string text = read_text_file(index_path);
    if (!is_hypotheses_document(text))
      throw Error(index_path + ": not a hypotheses document (it must begin 'hypotheses_document: 1')");
    const std::string expected = hypotheses_source_hash({data_bytes}, device);
    return parse_hypotheses_document(text, index_path, device, load_device_rules(device), &expected);
  } catch (const Error& e) {
    log << "layoutx: hypothesis calibration unusable (" << e.what() << "); refitting in memory (run `layoutx calibrate --update-shipped` to save)\n";
  }
  std::vector<MeasurementRecord> records = load_measurements_text(data_bytes, data_path);
  if (refitted) *refitted = true;
  return make_predictor(fit_hypotheses(records, device, {device.calibration.measurements}), device);
}

std::unique_ptr<HypothesisPredictor> load_default_hypothesis_predictor(std::ostream& log) {
  return load_shipped_hypothesis_predictor(load_device_named(kDefaultDevice), log);
}

}  // namespace layoutx::costmodel
