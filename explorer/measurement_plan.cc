#include "explorer/measurement_plan.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "explorer/design_space.h"
#include "support/error.h"

namespace layoutx::explorer {

std::string graph_key(const model::LayerSpec& layer, const model::Variant& v) {
  return Evaluator::shape_key(layer) + "|" + v.key();
}

const char* to_string(PlannedMeasurement::Kind k) {
  return k == PlannedMeasurement::Kind::kTiming ? "timing" : "compile-only";
}

namespace {

// A standard normal on a fine grid: E[f(z)] ~ sum w_i f(z_i). Deterministic (no sampling), and
// exact enough for the expectation of a minimum of lines (piecewise linear in z).
struct NormalGrid {
  std::vector<double> z, w;
  NormalGrid() {
    const int n = 1201;
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
const NormalGrid& grid() {
  static const NormalGrid g;
  return g;
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

struct Belief {
  size_t n = 0;
  std::vector<double> mean;
  std::vector<double> cov;  // row-major
  double model_rel_sd = 0;
  // Sigma x (us^2 per feature unit): the covariance of theta with x . theta.
  std::vector<double> times(const std::vector<double>& x) const {
    std::vector<double> out(n, 0.0);
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j) out[i] += cov[i * n + j] * x[j];
    return out;
  }
};

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) s += a[i] * b[i];
  return s;
}

std::string layer_label(const Decision& d) {
  return std::string(model::to_string(d.layer.type)) + " @ ctx " + std::to_string(d.ctx);
}

}  // namespace

std::vector<PlannedMeasurement> plan_measurements(const costmodel::Predictor& predictor,
                                                  const std::vector<Decision>& decisions, const PlanOptions& opt) {
  auto b = predictor.belief();
  if (!b) throw Error("next: the cost model of " + predictor.device() + " has no linear belief over its coefficients");
  Belief belief;
  belief.n = b->mean.size();
  belief.mean = b->mean;
  belief.model_rel_sd = b->noise_rel_sd;
  belief.cov = b->covariance;
  if (belief.cov.size() != belief.n * belief.n) throw Error("next: the belief's covariance is not square");

  // 1. The arms of each decision: its candidates known to compile.
  std::vector<std::vector<Arm>> arms(decisions.size());
  for (size_t d = 0; d < decisions.size(); ++d)
    for (const auto& k : decisions[d].choice.candidates)
      if (known_good(k) && k.eval.prediction.design_row.size() == belief.n)
        arms[d].push_back({k.eval.prediction.latency_ms, &k.eval.prediction.design_row, k.eval.variant});

  std::vector<PlannedMeasurement> plan;
  const NormalGrid& g = grid();

  // 2. Timings: each distinct known-good graph (a sliding layer's is the same at every context).
  std::map<std::string, bool> seen;
  for (size_t src = 0; src < decisions.size(); ++src)
    for (const auto& k : decisions[src].choice.candidates) {
      if (!known_good(k) || k.eval.prediction.design_row.size() != belief.n) continue;
      const std::string key = graph_key(decisions[src].layer, k.eval.variant);
      if (seen[key] || opt.already_timed.count(key)) continue;
      seen[key] = true;
      const std::vector<double>& x = k.eval.prediction.design_row;
      const double L = k.eval.prediction.latency_ms;
      const std::vector<double> sx = belief.times(x);
      const double rel2 = belief.model_rel_sd * belief.model_rel_sd;
      const double var_y = std::max(dot(x, sx) / 1e6, 0.0) + rel2 * L * L + std::pow(opt.timing_rel_sd * L, 2);
      const double sd_y = std::sqrt(std::max(var_y, 1e-18));

      PlannedMeasurement m;
      m.kind = PlannedMeasurement::Kind::kTiming;
      m.variant = k.eval.variant;
      m.layer = decisions[src].layer;
      m.ctx = decisions[src].ctx;
      m.predicted_ms = L;
      m.predictive_sd_ms = sd_y;
      std::vector<double> changed_mass(g.z.size(), 0.0);  // 1 where some decision changes
      double best_contribution = -1;
      for (size_t d = 0; d < decisions.size(); ++d) {
        const auto& A = arms[d];
        if (A.size() < 2) continue;
        std::vector<double> a(A.size()), slope(A.size());
        size_t now = 0;
        for (size_t i = 0; i < A.size(); ++i) {
          a[i] = A[i].latency_ms;
          const double cov = dot(*A[i].row, sx) / 1e6 + rel2 * A[i].latency_ms * L;
          slope[i] = cov / sd_y;
          if (a[i] < a[now]) now = i;
        }
        // E[min_i (a_i + slope_i z)], and which arm wins where.
        double e_min = 0;
        std::map<size_t, double> wins;
        for (size_t t = 0; t < g.z.size(); ++t) {
          size_t arg = 0;
          double lo = a[0] + slope[0] * g.z[t];
          for (size_t i = 1; i < A.size(); ++i) {
            const double v = a[i] + slope[i] * g.z[t];
            if (v < lo) lo = v, arg = i;
          }
          e_min += g.w[t] * lo;
          if (arg != now) {
            wins[arg] += g.w[t];
            changed_mass[t] = 1.0;
          }
        }
        const double contribution = std::max(0.0, a[now] - e_min) * decisions[d].count;
        m.value_ms += contribution;
        if (contribution > best_contribution && contribution > 0 && !wins.empty()) {
          auto alt = std::max_element(wins.begin(), wins.end(),
                                      [](const auto& x, const auto& y) { return x.second < y.second; });
          best_contribution = contribution;
          m.decision = layer_label(decisions[d]);
          m.current = A[now].variant;
          m.alternative = A[alt->first].variant;
          m.p_alternative = alt->second;
        }
      }
      for (size_t t = 0; t < g.z.size(); ++t) m.p_choice_changes += g.w[t] * changed_mass[t];
      plan.push_back(std::move(m));
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
      const std::string form = l.reasons.empty() ? u.candidate.eval.variant.key() : l.reasons[0].substr(0, l.reasons[0].find(':'));
      const std::string question = form + " at " + model::to_string(u.candidate.eval.variant.precision()) + " (" +
                                   costmodel::to_string(l.compiles) + ")";
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

}  // namespace layoutx::explorer
