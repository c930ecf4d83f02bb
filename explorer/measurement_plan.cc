#include "explorer/measurement_plan.h"

#include <algorithm>
#include <filesystem>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>

#include "costmodel/mixture.h"
#include "explorer/design_space.h"
#include "explorer/layout_file.h"
#include "explorer/model_layout.h"
#include "model/builder.h"
#include "support/error.h"
#include "support/paths.h"

namespace layoutx::explorer {

std::string graph_key(const model::LayerSpec& layer, const model::Variant& v) { return Evaluator::graph_key(layer, v); }

const char* to_string(PlannedMeasurement::Kind k) {
  switch (k) {
    case PlannedMeasurement::Kind::kTiming: return "timing";
    case PlannedMeasurement::Kind::kCompileOnly: return "compile-only";
    case PlannedMeasurement::Kind::kOpProfile: return "op-profile";
    case PlannedMeasurement::Kind::kWholeModel: return "whole-model";
  }
  return "?";
}

namespace {

// A standard normal on a grid of n points over +-6 sd: E[f(z)] ~ sum w_i f(z_i). Deterministic
// (no sampling), and exact enough for the expectation of a minimum of lines (piecewise linear).
struct NormalGrid {
  std::vector<double> z, w;
  explicit NormalGrid(int n) {
    const double lo = -6.0, hi = 6.0, h = (hi - lo) / (n - 1);
    double sum = 0;
    for (int i = 0; i < n; ++i) {
      z.push_back(lo + i * h);
      w.push_back(std::exp(-0.5 * z.back() * z.back()));
      sum += w.back();
    }
    for (double& x : w) x /= sum;
  }
};
// One belief: 1201 points. A mixture of H: about 6000 points in all, 241 per component (a
// spacing of 0.05 sd) for up to 24 components, down to 61 (0.2 sd) from 96, so that the work per
// observation (points x H posterior weights x arms) stays near linear in H. The integrand is a
// minimum of smooth curves under a normal weight: 0.2 sd moves a value by well under 1%.
const NormalGrid& grid(size_t components) {
  static const NormalGrid one(1201);
  static std::map<int, NormalGrid> each;  // by size; std::map keeps references valid
  static std::mutex guard;
  if (components == 1) return one;
  int n = static_cast<int>(6000 / components);
  n = std::clamp(n - (n % 2 == 0), 61, 241);  // odd: z = 0 is a point
  std::lock_guard<std::mutex> lock(guard);
  return each.try_emplace(n, n).first->second;
}

// One graph a decision looks at: its latency, design row and identity.
struct Arm {
  double latency_ms = 0;
  const std::vector<double>* row = nullptr;
  model::Variant variant;
};

bool known_good(const Candidate& k) {
  return k.eligible && k.eval.prediction.legality.compiles == costmodel::Compiles::kYes;
}

// One component of the belief (a hypothesis of the device, or the only one), reading its slice
// of the design row.
struct Component {
  double weight = 1;
  size_t offset = 0, n = 0;
  std::vector<double> mean;
  std::vector<double> cov;  // n x n, row-major
  double rel2 = 0;          // its model error, squared (relative)
  double dot(const std::vector<double>& row, const std::vector<double>& v) const {
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += row[offset + i] * v[i];
    return s;
  }
  double latency_ms(const std::vector<double>& row) const { return dot(row, mean) / 1e3; }
  // Sigma x over the slice (us^2 per feature unit): the covariance of theta with x . theta.
  std::vector<double> times(const std::vector<double>& row) const {
    std::vector<double> out(n, 0.0);
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j) out[i] += cov[i * n + j] * row[offset + j];
    return out;
  }
};

std::string layer_label(const Decision& d) {
  return std::string(model::to_string(d.layer.type)) + " @ ctx " + std::to_string(d.ctx);
}

// The knowledge gradient of observing y = x . theta / 1e3 (ms) with a scatter of scatter_ms(h, mu_h)
// under component h: fills m's value, P(change), predictive sd and what it would change.
// Under component h, y is N(mu_h, s_h^2) and arm i's latency moves with it along slope
// c_ih / s_h^2; after seeing y, the weights become p(h | y) and arm i's posterior mean is
// sum_h p(h | y) (a_ih + c_ih (y - mu_h) / s_h^2). The value is E_y[the decision's improvement],
// y drawn from the mixture: an observation that tells hypotheses apart is worth what that changes.
template <class Scatter>
void value_observation(const std::vector<double>& x, Scatter scatter_ms, const std::vector<Component>& comps,
                       const std::vector<Decision>& decisions, const std::vector<std::vector<Arm>>& arms,
                       const std::vector<std::vector<std::vector<double>>>& arm_ms, const std::vector<size_t>& now,
                       PlannedMeasurement& m) {
  const size_t H = comps.size();
  const NormalGrid& g = grid(H);
  std::vector<double> mu(H), s(H), log_ws(H);
  std::vector<std::vector<double>> sx(H);
  for (size_t h = 0; h < H; ++h) {
    const Component& c = comps[h];
    mu[h] = c.latency_ms(x);
    sx[h] = c.times(x);
    const double var_y = std::max(c.dot(x, sx[h]) / 1e6, 0.0) + c.rel2 * mu[h] * mu[h] +
                         std::pow(scatter_ms(h, mu[h]), 2);
    s[h] = std::sqrt(std::max(var_y, 1e-18));
    log_ws[h] = std::log(std::max(c.weight, 1e-300)) - std::log(s[h]);
  }

  {
    std::vector<double> w(H), sd(H);
    for (size_t h = 0; h < H; ++h) w[h] = comps[h].weight, sd[h] = s[h];
    m.predictive_sd_ms = costmodel::mix(w, mu, sd).sd;
  }
  // Per decision, each arm's line under each component h, y -> a_ih + b_ih (y - mu_h) with
  // b_ih = c_ih / s_h^2, kept as two arrays [arm][component]: alpha = a - b mu and the slope b, so
  // that a posterior mix is post . alpha_i + y (post . b_i). A decision of fewer than 2 arms has none.
  std::vector<std::vector<double>> alpha(decisions.size()), slope(decisions.size());
  for (size_t d = 0; d < decisions.size(); ++d) {
    if (arms[d].size() < 2) continue;
    alpha[d].resize(arms[d].size() * H);
    slope[d].resize(arms[d].size() * H);
    for (size_t i = 0; i < arms[d].size(); ++i)
      for (size_t h = 0; h < H; ++h) {
        const double a = arm_ms[d][i][h];
        const double cov = comps[h].dot(*arms[d][i].row, sx[h]) / 1e6 + comps[h].rel2 * a * mu[h];
        const double b = cov / (s[h] * s[h]);
        alpha[d][i * H + h] = a - b * mu[h];
        slope[d][i * H + h] = b;
      }
  }
  // The arms that can be a decision's minimum somewhere: y only takes values on the components'
  // grids, within [y_lo, y_hi]; an arm whose line lies above another arm's line under every
  // component at both ends of that range lies above it at every y and every posterior mix, so it
  // is never the minimum (dropping it changes no figure; most layouts lose to a few everywhere).
  double y_lo = 1e300, y_hi = -1e300;
  for (size_t h = 0; h < H; ++h) {
    y_lo = std::min(y_lo, mu[h] + s[h] * g.z.front());
    y_hi = std::max(y_hi, mu[h] + s[h] * g.z.back());
  }
  std::vector<std::vector<size_t>> live(decisions.size());
  for (size_t d = 0; d < decisions.size(); ++d) {
    const size_t n = alpha[d].size() / H;
    auto at = [&](size_t i, size_t q, double y) { return alpha[d][i * H + q] + slope[d][i * H + q] * y; };
    for (size_t i = 0; i < n; ++i) {
      bool dominated = false;
      for (size_t j = 0; j < n && !dominated; ++j) {
        if (j == i) continue;
        bool above = true;
        for (size_t q = 0; q < H && above; ++q) above = at(i, q, y_lo) > at(j, q, y_lo) && at(i, q, y_hi) > at(j, q, y_hi);
        dominated = above;
      }
      if (!dominated) live[d].push_back(i);
    }
  }
  std::vector<double> e_min(decisions.size(), 0.0);
  std::vector<std::map<size_t, double>> wins(decisions.size());
  std::vector<double> post(H);
  for (size_t h = 0; h < H; ++h)
    for (size_t t = 0; t < g.z.size(); ++t) {
      const double y = mu[h] + s[h] * g.z[t], W = comps[h].weight * g.w[t];
      double top = -1e300;
      for (size_t q = 0; q < H; ++q) {
        const double r = (y - mu[q]) / s[q];
        post[q] = log_ws[q] - 0.5 * r * r;
        top = std::max(top, post[q]);
      }
      double sum = 0;
      for (double& v : post) sum += (v = std::exp(v - top));
      for (double& v : post) v /= sum;
      bool changed = false;
      for (size_t d = 0; d < decisions.size(); ++d) {
        if (alpha[d].empty()) continue;
        size_t arg = 0;
        double lo = 1e300;
        for (size_t i : live[d]) {
          // sum_q post_q (a_iq + b_iq (y - mu_q)) = post . alpha_i + y (post . b_i): two contiguous dots.
          const double* al = alpha[d].data() + i * H;
          const double* sl = slope[d].data() + i * H;
          double va = 0, vb = 0;
          for (size_t q = 0; q < H; ++q) va += post[q] * al[q], vb += post[q] * sl[q];
          const double v = va + y * vb;
          if (v < lo) lo = v, arg = i;
        }
        e_min[d] += W * lo;
        if (arg != now[d]) wins[d][arg] += W, changed = true;
      }
      if (changed) m.p_choice_changes += W;
    }
  double best_contribution = -1;
  for (size_t d = 0; d < decisions.size(); ++d) {
    if (alpha[d].empty()) continue;
    double current = 0;
    for (size_t h = 0; h < H; ++h) current += comps[h].weight * arm_ms[d][now[d]][h];
    const double contribution = std::max(0.0, current - e_min[d]) * decisions[d].count;
    m.value_ms += contribution;
    if (contribution > best_contribution && contribution > 0 && !wins[d].empty()) {
      auto alt = std::max_element(wins[d].begin(), wins[d].end(),
                                  [](const auto& x, const auto& y) { return x.second < y.second; });
      best_contribution = contribution;
      m.decision = layer_label(decisions[d]);
      m.current = arms[d][now[d]].variant;
      m.alternative = arms[d][alt->first].variant;
      m.p_alternative = alt->second;
    }
  }
}

// The belief the values are computed under: its components, each decision's arms (its candidates
// known to compile) and their latencies under each component, and each decision's current arm.
struct Belief {
  std::vector<Component> comps;
  size_t row_size = 0;
  std::vector<std::vector<Arm>> arms;
  std::vector<std::vector<std::vector<double>>> arm_ms;  // [decision][arm][component] (ms)
  std::vector<size_t> now;                               // per decision: the arm the mixture chooses
};

Belief belief_of(const costmodel::Predictor& predictor, const std::vector<Decision>& decisions) {
  Belief b;
  std::vector<Component>& comps = b.comps;
  size_t& row_size = b.row_size;
  for (auto& c : predictor.belief_components()) {
    Component k;
    k.weight = c.weight;
    k.offset = c.offset;
    k.n = c.belief.mean.size();
    k.mean = std::move(c.belief.mean);
    k.cov = std::move(c.belief.covariance);
    k.rel2 = c.belief.noise_rel_sd * c.belief.noise_rel_sd;
    if (k.cov.size() != k.n * k.n) throw Error("next: the belief's covariance is not square");
    row_size = std::max(row_size, k.offset + k.n);
    comps.push_back(std::move(k));
  }
  if (comps.empty())
    throw Error("next: the cost model of " + predictor.device() + " has no linear belief over its coefficients");
  const size_t H = comps.size();
  b.arms.resize(decisions.size());
  for (size_t d = 0; d < decisions.size(); ++d)
    for (const auto& k : decisions[d].choice.candidates)
      if (known_good(k) && k.eval.prediction.design_row.size() == row_size)
        b.arms[d].push_back({k.eval.prediction.latency_ms, &k.eval.prediction.design_row, k.eval.variant});
  b.arm_ms.resize(decisions.size());
  b.now.assign(decisions.size(), 0);
  for (size_t d = 0; d < decisions.size(); ++d) {
    double best = 1e300;
    for (size_t i = 0; i < b.arms[d].size(); ++i) {
      std::vector<double> per(H);
      double mixed = 0;
      for (size_t h = 0; h < H; ++h) mixed += comps[h].weight * (per[h] = comps[h].latency_ms(*b.arms[d][i].row));
      b.arm_ms[d].push_back(std::move(per));
      if (mixed < best) best = mixed, b.now[d] = i;
    }
  }
  return b;
}

}  // namespace

std::vector<PlannedMeasurement> plan_measurements(const costmodel::Predictor& predictor,
                                                  const std::vector<Decision>& decisions, const PlanOptions& opt) {
  // 1. The belief, and the arms of each decision: its candidates known to compile.
  const Belief b = belief_of(predictor, decisions);
  const std::vector<Component>& comps = b.comps;
  const size_t row_size = b.row_size, H = comps.size();
  const auto& arms = b.arms;
  const auto& arm_ms = b.arm_ms;
  const auto& now = b.now;

  std::vector<PlannedMeasurement> plan;

  // 2. Each distinct known-good graph (a sliding layer's is the same at every context): a timing
  // when it was not timed yet, valued by value_observation with its design row; else an op-level
  // profile, where each op class's time is a linear observation (its class row) and the profile
  // is worth its most valuable class.
  std::map<std::string, bool> seen;
  for (size_t src = 0; src < decisions.size(); ++src)
    for (const auto& k : decisions[src].choice.candidates) {
      if (!known_good(k) || k.eval.prediction.design_row.size() != row_size) continue;
      const std::string key = graph_key(decisions[src].layer, k.eval.variant);
      if (seen[key]) continue;
      seen[key] = true;
      PlannedMeasurement m;
      m.variant = k.eval.variant;
      m.layer = decisions[src].layer;
      m.ctx = decisions[src].ctx;
      m.predicted_ms = k.eval.prediction.latency_ms;
      if (!opt.already_timed.count(key)) {
        m.kind = PlannedMeasurement::Kind::kTiming;
        value_observation(
            k.eval.prediction.design_row, [&](size_t, double mu) { return opt.timing_rel_sd * mu; }, comps,
            decisions, arms, arm_ms, now, m);
        plan.push_back(std::move(m));
        continue;
      }
      m.kind = PlannedMeasurement::Kind::kOpProfile;
      std::vector<double> layer_ms(H);  // the layer's latency under each component
      for (size_t h = 0; h < H; ++h) layer_ms[h] = comps[h].latency_ms(k.eval.prediction.design_row);
      std::optional<PlannedMeasurement> best;
      for (const auto& [cls, row] : predictor.class_rows(model::build_layer_graph(m.layer, m.variant))) {
        if (row.size() != row_size) continue;
        PlannedMeasurement c = m;
        c.profile_class = cls;
        for (size_t h = 0; h < H; ++h) c.class_ms += comps[h].weight * comps[h].latency_ms(row);
        value_observation(
            row, [&](size_t h, double) { return opt.share_sd * layer_ms[h]; }, comps, decisions, arms, arm_ms, now, c);
        if (!best || c.value_ms > best->value_ms + 1e-12 ||
            (std::abs(c.value_ms - best->value_ms) <= 1e-12 && c.p_choice_changes > best->p_choice_changes))
          best = std::move(c);
      }
      if (best) plan.push_back(std::move(*best));
    }

  // 3. Compile-only checks of the untested candidates that would be faster, one per legality
  // question (the form that leaves it open, at the precision): one outcome decides every graph
  // that has the form, so their savings add up.
  std::map<std::string, size_t> by_question;
  std::map<std::string, double> best_single;  // the largest one graph's value, per question
  std::map<std::string, std::set<std::string>> graphs;  // distinct graphs per question
  for (const auto& d : decisions)
    for (const auto& u : d.choice.untested) {
      const auto& l = u.candidate.eval.prediction.legality;
      const double p = l.compiles == costmodel::Compiles::kContested ? opt.p_compiles_contested : opt.p_compiles_unknown;
      std::string form = l.reasons.empty() ? u.candidate.eval.variant.key() : l.reasons[0].substr(0, l.reasons[0].find(':'));
      // An axis record's reason already names the precision ("k_layout=rows at w4a16: unknown").
      const std::string at = " at " + std::string(model::to_string(u.candidate.eval.variant.precision()));
      if (form.size() >= at.size() && form.compare(form.size() - at.size(), at.size(), at) == 0) form.resize(form.size() - at.size());
      const std::string question = form + at + " (" + costmodel::to_string(l.compiles) + ")";
      auto [it, fresh] = by_question.emplace(question, plan.size());
      const double value = p * std::max(0.0, u.saving_ms) * d.count;
      if (fresh) {
        PlannedMeasurement m;
        m.kind = PlannedMeasurement::Kind::kCompileOnly;
        m.variant = u.candidate.eval.variant;
        m.layer = d.layer;
        m.ctx = d.ctx;
        m.predicted_ms = u.candidate.eval.prediction.latency_ms;
        m.p_choice_changes = p;
        m.legality_question = question;
        m.graphs_sharing = 0;
        plan.push_back(std::move(m));
      }
      if (fresh || value > best_single[question]) {
        // The bundle is of the graph where the outcome matters most.
        plan[it->second].variant = u.candidate.eval.variant;
        plan[it->second].layer = d.layer;
        plan[it->second].ctx = d.ctx;
        plan[it->second].predicted_ms = u.candidate.eval.prediction.latency_ms;
        best_single[question] = value;
      }
      plan[it->second].value_ms += value;
      graphs[question].insert(graph_key(d.layer, u.candidate.eval.variant));
      plan[it->second].graphs_sharing = static_cast<int>(graphs[question].size());
    }

  // Values within 1e-6 ms per step are a tie (the grid's own resolution is far coarser).
  std::stable_sort(plan.begin(), plan.end(), [](const PlannedMeasurement& x, const PlannedMeasurement& y) {
    if (std::abs(x.value_ms - y.value_ms) > 1e-6) return x.value_ms > y.value_ms;
    if (std::abs(x.p_choice_changes - y.p_choice_changes) > 1e-6) return x.p_choice_changes > y.p_choice_changes;
    if (x.predictive_sd_ms != y.predictive_sd_ms) return x.predictive_sd_ms > y.predictive_sd_ms;
    return x.kind < y.kind;
  });
  return plan;
}

std::vector<PlannedMeasurement> value_whole_models(const costmodel::Predictor& predictor,
                                                   const std::vector<Decision>& decisions,
                                                   const std::vector<WholeModelCandidate>& candidates,
                                                   const PlanOptions& opt) {
  const Belief b = belief_of(predictor, decisions);
  const double rel_sd = std::hypot(opt.timing_rel_sd, opt.whole_model_rel_sd);
  std::vector<PlannedMeasurement> out;
  for (const auto& c : candidates) {
    if (c.row.size() != b.row_size)
      throw Error("next: " + c.name + ": its design row has " + std::to_string(c.row.size()) + " features, the belief " +
                  std::to_string(b.row_size));
    PlannedMeasurement m;
    m.kind = PlannedMeasurement::Kind::kWholeModel;
    m.whole_model = c.name;
    m.ctx = c.ctx;
    m.predicted_ms = c.predicted_ms;
    value_observation(c.row, [&](size_t, double mu) { return rel_sd * mu; }, b.comps, decisions, b.arms, b.arm_ms, b.now, m);
    // The variants it would change are named in the scope of the decision's layer.
    for (const auto& d : decisions)
      if (layer_label(d) == m.decision) m.layer = d.layer;
    out.push_back(std::move(m));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const PlannedMeasurement& x, const PlannedMeasurement& y) { return x.value_ms > y.value_ms; });
  return out;
}

WholeModelCandidate whole_model_candidate(Evaluator& ev, const std::string& layout_path,
                                          const costmodel::RuntimeSpec& runtime) {
  const LayoutFile f = read_layout_file(layout_path);
  const model::ModelSpec m = layout_file_model(f, layout_path);
  const ModelLayout l = model_layout_of(f, m, layout_path);
  WholeModelCandidate c;
  c.name = shown_path(layout_path);
  c.ctx = f.context;
  const MemberCosts members = price_members(ev, m, f.context, l);
  c.predicted_ms = price_partition(members, m, l, runtime, ev.predictor().device()).ms;
  c.row = whole_model_row(members, m);
  return c;
}

std::vector<std::string> shipped_exporter_layouts() {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(config_path("layouts/exporters"), ec))
    // The folder holds the layouts' model specs too: a layout file is one that names its schema.
    if (e.is_regular_file() && e.path().extension() == ".yaml" &&
        read_text_file(e.path().string()).find("\nschema: layoutx-layout/") != std::string::npos)
      out.push_back(e.path().string());
  if (ec) throw Error(config_path("layouts/exporters") + ": " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace layoutx::explorer
