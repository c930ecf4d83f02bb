#include "costmodel/hypothesis_predictor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "costmodel/mixture.h"
#include "support/error.h"
#include "support/hash.h"

namespace layoutx::costmodel {

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
    ident += members_[h]->calibration_id() + ":" + hash_number(weights_[h]) + " ";
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
  for (const auto& m : members_) specs_.push_back(&m->device_spec());
  for (size_t h = 0; h < members_.size(); ++h) {
    size_t j = 0;
    while (j < h && !same_coefficient_layout(*specs_[j], *specs_[h])) ++j;
    layout_.push_back(j);
  }
  // An 8-hex id of the members' ids and weights.
  id_ = hex(fnv1a(ident), 8);
}

std::unique_ptr<Predictor> HypothesisPredictor::reweighted(const std::vector<double>& weights) const {
  if (weights.size() != members_.size())
    throw Error("hypotheses: " + std::to_string(weights.size()) + " weights for " + std::to_string(members_.size()) +
                " hypotheses");
  std::vector<std::string> names;
  std::vector<double> kept_weights;
  std::vector<std::unique_ptr<OpLevelPredictor>> members;
  for (size_t h : kept_hypotheses(weights)) {
    names.push_back(names_[h]);
    kept_weights.push_back(weights[h]);
    members.push_back(std::make_unique<OpLevelPredictor>(*members_[h]));
  }
  return std::make_unique<HypothesisPredictor>(std::move(names), std::move(kept_weights), std::move(members));
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
  // A featurization's ops' places in p.ops, found by a pass that added none (so a later member
  // of that featurization, finding p.ops unchanged, would find the same places): `size` is
  // p.ops.size() then, `next` and `last_first` the search state after its last op.
  struct Places {
    size_t size = 0, next = 0, last_first = 0;
    std::vector<size_t> at;
    bool valid = false;
  };
  std::vector<Places> places(features.size());
  std::vector<size_t> at_of;
  for (size_t h = 1; h < each.size(); ++h) {
    const std::vector<LoweredOp>& ops = features[group[h]].ops;
    const bool same_ops = group[h] == group.front();
    Places& known = places[group[h]];
    // Both lists are in the graph's op order (a folded softmax is one op named as its first),
    // so each op is looked for from just after the previous match, then from the start; ops
    // of the first hypothesis's own featurization are at the same index.
    size_t next = 0, last_first = kAtFront, i = 0;
    const size_t start_size = p.ops.size();
    if (!same_ops && known.valid && known.size == start_size) {
      for (; i < ops.size() && i < op_ms[h].size(); ++i) p.ops[known.at[i]].ms += weights[h] * op_ms[h][i];
      next = known.next;
      last_first = known.last_first;
    }
    at_of.clear();
    for (; i < op_ms[h].size(); ++i) {
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
      if (i < ops.size()) at_of.push_back(at);
      if (!same_ops && i + 1 == ops.size() && at_of.size() == ops.size() && p.ops.size() == start_size) {
        known.valid = true;  // every op placed by this pass, none added
        known.size = start_size;
        known.next = next;
        known.last_first = last_first;
        known.at = at_of;
      }
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

HypothesisPredictor::Priced HypothesisPredictor::price_members(const MemberFeatures& mf) const {
  Priced r;
  r.priced.resize(members_.size());
  r.each.reserve(members_.size());
  r.weights.reserve(members_.size());
  r.op_ms.reserve(members_.size());
  r.each_group.reserve(members_.size());
  // Each featurization's rows under each layout its members use, computed when first asked.
  struct Rows {
    size_t features, layout;
    LayerRows rows;
  };
  std::vector<Rows> rows;
  rows.reserve(mf.features.size());
  for (size_t h = 0; h < members_.size(); ++h) {
    const size_t k = mf.of_member[h];
    // An earlier member with the same calibration and the same featurization has priced it.
    size_t j = 0;
    while (j < h && !(twin_[j] == twin_[h] && mf.of_member[j] == k)) ++j;
    if (j < h) {
      r.weights[r.priced[j]] += weights_[h];
      r.priced[h] = r.priced[j];
      continue;
    }
    r.priced[h] = r.each.size();
    r.op_ms.emplace_back();
    size_t i = 0;
    while (i < rows.size() && !(rows[i].features == k && rows[i].layout == layout_[h])) ++i;
    if (i == rows.size()) rows.push_back({k, layout_[h], layer_rows(*specs_[h], mf.features[k])});
    r.each.push_back(members_[h]->price(mf.features[k], rows[i].rows, r.each.empty() ? nullptr : &r.op_ms.back()));
    r.each_group.push_back(k);
    r.weights.push_back(weights_[h]);
  }
  return r;
}

Prediction HypothesisPredictor::predict(const model::LayerGraph& graph) const {
  // Featurize once per structure that differs for this graph (FeaturizationCache) and price each
  // distinct (structure, calibration) once; then the floor and the legality of the graph once
  // (they do not depend on the hypothesis).
  const MemberFeatures mf = cache_.featurize(graph, specs_);
  Priced r = price_members(mf);
  const std::vector<LoweredOp>* unfused = mf.unfused_ops();  // a lowering of the graph as written
  Prediction p = combine(r.each, r.op_ms, r.weights, r.each_group, mf.features);
  p.design_row.reserve(offset_.back());
  for (size_t h = 0; h < members_.size(); ++h)
    p.design_row.insert(p.design_row.end(), r.each[r.priced[h]].design_row.begin(), r.each[r.priced[h]].design_row.end());
  p.floor_ms = members_.front()->floor_ms(graph);
  p.legality = unfused ? members_.front()->legality(graph, *unfused) : members_.front()->legality(graph);
  return p;
}

namespace {
// x . t over n doubles: the explorer's fast path (HypothesisPredictor::latency_from_row), a dot
// product over every member's slice (720 doubles for 45 members of 16 coefficients), where the
// loads are the cost. Built twice with GCC on x86-64: for AVX2 with FMA (4 doubles a load) and
// for the baseline (SSE2); the loader picks by the CPU. The sum's order is this function's own,
// so it may differ from Prediction::latency_ms in the last digits (the tests allow 1e-9 ms).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
double dot(const double* x, const double* t, size_t n) {
  typedef double v4d __attribute__((vector_size(32)));
  v4d a = {0, 0, 0, 0}, b = a, c = a, d = a;  // four chains: an FMA's latency is four cycles
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    v4d x0, x1, x2, x3, t0, t1, t2, t3;
    std::memcpy(&x0, x + i, sizeof x0);  // unaligned loads
    std::memcpy(&x1, x + i + 4, sizeof x1);
    std::memcpy(&x2, x + i + 8, sizeof x2);
    std::memcpy(&x3, x + i + 12, sizeof x3);
    std::memcpy(&t0, t + i, sizeof t0);
    std::memcpy(&t1, t + i + 4, sizeof t1);
    std::memcpy(&t2, t + i + 8, sizeof t2);
    std::memcpy(&t3, t + i + 12, sizeof t3);
    a += x0 * t0;
    b += x1 * t1;
    c += x2 * t2;
    d += x3 * t3;
  }
  for (; i + 4 <= n; i += 4) {
    v4d x0, t0;
    std::memcpy(&x0, x + i, sizeof x0);
    std::memcpy(&t0, t + i, sizeof t0);
    a += x0 * t0;
  }
  a += b;
  c += d;
  a += c;
  double sum = (a[0] + a[1]) + (a[2] + a[3]);
  for (; i < n; ++i) sum += x[i] * t[i];
  return sum;
}
}  // namespace

double HypothesisPredictor::latency_from_row(const std::vector<double>& row) const {
  return dot(row.data(), weighted_theta_.data(), static_cast<size_t>(weighted_theta_.size()));
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
    const double rel = std::max(model_rel_sd_at(c, ra), model_rel_sd_at(c, rb));  // as OpLevelPredictor's
    const double model_sd = rel * std::abs(da - db);
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

}  // namespace layoutx::costmodel
