#include "cli/hypotheses_output.h"

#include <algorithm>
#include <cmath>

#include "cli/table.h"
#include "costmodel/probe_figures.h"

namespace layoutx::cli {

namespace {

std::string pct(double v) { return fmt(100.0 * v, 1) + "%"; }

std::string interval(const costmodel::Prediction& p) {
  return fmt(p.latency_ms, 3) + " [" + fmt(p.low_ms, 3) + ", " + fmt(p.high_ms, 3) + "]";
}

// "the first export", "exports 1, 2 and 3": the exports a replay step fitted on; "the second".
std::string ordinal(int n) {
  static const char* const kWords[] = {"first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"};
  return n >= 1 && n <= 10 ? kWords[n - 1] : std::to_string(n) + "th";
}

std::string exports_text(const std::vector<int>& exports) {
  if (exports.size() == 1) return "the " + ordinal(exports.front()) + " export";
  std::string s = "exports ";
  for (size_t i = 0; i < exports.size(); ++i)
    s += (i == 0 ? "" : i + 1 == exports.size() ? " and " : ", ") + std::to_string(exports[i]);
  return s;
}

// One replay step: its predictions, the design history's differences, and each hypothesis's.
void print_replay(const costmodel::HypothesisSet& set, const costmodel::ReplayReport& replay, std::ostream& out) {
  out << "\nreplay of the design history: fit on " << exports_text(replay.fitted_exports) << " ("
      << replay.trained_on.size() << " timings and their shares), predict the " << ordinal(replay.predicted_export)
      << ":\n";
  Table r({"timing", "measured ms", "predicted ms", "90% interval", "error"});
  for (const auto& row : replay.rows)
    r.add({row.id, fmt(row.measured_ms, 3), fmt(row.predicted_ms, 3),
           "[" + fmt(row.low_ms, 3) + ", " + fmt(row.high_ms, 3) + "]", pct(row.predicted_ms / row.measured_ms - 1)});
  r.print(out);
  Table d({"difference", "from", "to", "measured", "predicted", "90% interval", "sign", "P(measured sign)"});
  for (const auto& x : replay.differences)
    d.add({x.what, x.a, x.b, pct(x.measured), pct(x.predicted), "[" + pct(x.low) + ", " + pct(x.high) + "]",
           (x.measured > 0) == (x.predicted > 0) ? "right" : "WRONG", fmt(x.p_measured_sign, 2)});
  d.print(out);
  out << "per hypothesis (replay weights";
  out << "; rows with replay weight >= 0.001 or the base):\n";
  std::vector<std::string> head = {"hypothesis", "replay weight"};
  for (const auto& row : replay.rows) head.push_back(row.id + " ms");
  for (const auto& x : replay.differences) head.push_back(x.b + " diff");
  Table ph(head);
  for (size_t h2 = 0; h2 < set.fits.size(); ++h2) {
    if (h2 != 0 && replay.weights[h2] < 1e-3) continue;
    std::vector<std::string> cells = {set.fits[h2].spec.name, fmt(replay.weights[h2], 3)};
    for (double v : replay.per_hypothesis_ms[h2]) cells.push_back(fmt(v, 3));
    for (const auto& per : replay.per_hypothesis_difference) cells.push_back(pct(per[h2]));
    ph.add(cells);
  }
  ph.print(out);
}

}  // namespace

std::string rate_text(costmodel::Term t, double value) {
  using costmodel::Term;
  switch (t) {
    case Term::kDispatch:
    case Term::kGraph: return fmt(value, 1) + " us";
    case Term::kMac: return value > 0 ? fmt(1e3 / value, 0) + " GMAC/s" : "free";
    case Term::kByte:
    case Term::kSpill:
    case Term::kStall: return value > 0 ? fmt(1e3 / value, 1) + " GB/s" : "free";
  }
  return "?";
}

void print_hypotheses(const costmodel::HypothesisSet& set, const costmodel::CalibrationReport& rep,
                      const costmodel::Predictor& pr, std::ostream& out) {
  out << "\nhypotheses (" << set.fits.size() << "; weights: " << set.method << "):\n";
  Table h({"hypothesis", "weight", "elpd", "in-sample max |r|/sd", "LOO median", "LOO max", "group LOO median",
           "group LOO max", "tau", "90% cover", "half-width"});
  auto add = [&](const costmodel::HypothesisReport& r) {
    h.add({r.name, fmt(r.weight, 3), r.name == "combined" ? "" : fmt(r.elpd, 1), fmt(r.max_abs_resid_sd, 2),
           pct(r.loo.median_abs), pct(r.loo.max_abs), pct(r.group_loo.median_abs), pct(r.group_loo.max_abs),
           fmt(r.loo.kendall_tau, 2), std::to_string(r.loo.covered) + "/" + std::to_string(r.loo.count),
           pct(r.loo.median_half_width)});
  };
  for (const auto& r : rep.hypotheses) add(r);
  add(rep.combined);
  h.print(out);
  // Hypotheses fitted identically (they differ only where nothing was measured, e.g. the
  // softmax folding of a graph nobody timed) share one coefficient table.
  auto same_fit = [&](size_t a, size_t b) {
    return costmodel::fitted_identically(set.fits[a].report.calibration, set.fits[b].report.calibration);
  };
  for (size_t h2 = 0; h2 < set.fits.size(); ++h2) {
    const auto& f = set.fits[h2];
    bool shown = false;
    for (size_t j = 0; j < h2 && !shown; ++j) shown = same_fit(j, h2);
    if (shown) continue;
    out << "\n" << f.spec.name << ": " << f.spec.claim << " (" << f.spec.source << ")\n";
    for (size_t j = h2 + 1; j < set.fits.size(); ++j)
      if (same_fit(h2, j)) out << "  fitted identically: " << set.fits[j].spec.name << "\n";
    Table k({"coefficient", "term", "prior", "fitted", "x prior"});
    const auto& c = f.report.calibration;
    for (size_t i = 0; i < f.device.coefficients.size(); ++i) {
      const auto& s = f.device.coefficients[i];
      const double v = c.theta[static_cast<Eigen::Index>(i)];
      k.add({s.name, costmodel::to_string(s.term), rate_text(s.term, s.prior), rate_text(s.term, v), fmt(v / s.prior, 2)});
    }
    k.print(out);
  }
  out << "\nheld out, combined (LOO: the timing and its shares out; group: its w8a16/w4a16 twin too):\n";
  Table l({"timing", "measured ms", "LOO ms", "90% interval", "error", "group LOO ms", "error"});
  for (size_t i = 0; i < rep.ids.size(); ++i)
    l.add({rep.ids[i], fmt(rep.measured_ms[i], 3), fmt(rep.loo_ms[i], 3),
           "[" + fmt(rep.loo_low_ms[i], 3) + ", " + fmt(rep.loo_high_ms[i], 3) + "]",
           pct(rep.loo_ms[i] / rep.measured_ms[i] - 1), fmt(rep.group_loo_ms[i], 3),
           pct(rep.group_loo_ms[i] / rep.measured_ms[i] - 1)});
  l.print(out);
  for (const auto& replay : rep.replays) print_replay(set, replay, out);
  if (!rep.replays.empty()) {
    const costmodel::ReplayCoverage c = costmodel::replay_coverage(rep.replays);
    out << "\nreplays together: " << c.inside << " of " << c.timings << " replayed timings inside their 90% intervals, median |error| "
        << pct(c.median_abs_error) << "; " << c.signs_right << " of " << c.differences << " differences with the measured sign\n";
  }
  // The device's probes (`probes:` in its spec), if it lists any.
  const std::vector<costmodel::ProbeFigures> figs = costmodel::probe_figures(set, pr);
  if (figs.empty()) return;
  out << "\npredictions of unmeasured variants (ms; hypotheses by weight, then the combined figure with its 90% interval):\n";
  std::vector<std::string> head2 = {"hypothesis", "weight"};
  for (const costmodel::ProbeFigures& f : figs) head2.push_back(f.probe->label);
  Table p(head2);
  std::vector<size_t> order(set.fits.size());
  for (size_t h2 = 0; h2 < order.size(); ++h2) order[h2] = h2;
  std::stable_sort(order.begin(), order.end(), [&](size_t a2, size_t b2) { return set.fits[a2].weight > set.fits[b2].weight; });
  for (size_t h2 : order) {
    std::vector<std::string> cells = {set.fits[h2].spec.name, fmt(set.fits[h2].weight, 3)};
    for (const costmodel::ProbeFigures& f : figs) cells.push_back(fmt(f.each[h2].prediction.latency_ms, 3));
    p.add(cells);
  }
  std::vector<std::string> comb = {"combined [90%]", "1.000"};
  for (const costmodel::ProbeFigures& f : figs) comb.push_back(interval(f.combined));
  p.add(comb);
  p.print(out);
}

namespace {

void write_held_out_summary(JsonWriter& w, const char* key, const costmodel::HeldOutSummary& s) {
  w.key(key).begin_object();
  w.field("median_abs_rel_error", s.median_abs);
  w.field("max_abs_rel_error", s.max_abs);
  w.field("kendall_tau", s.kendall_tau);
  w.field("covered_90", s.covered);
  w.field("count", s.count);
  w.field("median_rel_half_width", s.median_half_width);
  w.end_object();
}

// A hypothesis's (or the mixture's) weight, evidence and held-out errors, as fields of the open object.
void write_hypothesis_report(JsonWriter& w, const costmodel::HypothesisReport& r) {
  w.field("weight", r.weight);
  w.field("elpd", r.elpd);
  w.field("max_abs_residual_sd", r.max_abs_resid_sd);
  write_held_out_summary(w, "loo", r.loo);
  write_held_out_summary(w, "group_loo", r.group_loo);
}

// "each": every hypothesis with its claim, report and fitted coefficients.
void write_each_hypothesis(JsonWriter& w, const costmodel::HypothesisSet& set, const costmodel::CalibrationReport& rep) {
  w.key("each").begin_array();
  for (size_t h = 0; h < set.fits.size(); ++h) {
    const auto& f = set.fits[h];
    w.begin_object();
    w.field("name", f.spec.name);
    w.field("claim", f.spec.claim);
    write_hypothesis_report(w, rep.hypotheses[h]);
    w.key("coefficients").begin_array();
    for (size_t i = 0; i < f.device.coefficients.size(); ++i) {
      const auto& s = f.device.coefficients[i];
      w.begin_object();
      w.field("name", s.name);
      w.field("term", costmodel::to_string(s.term));
      w.field("prior", s.prior);
      w.field("value", f.report.calibration.theta[static_cast<Eigen::Index>(i)]);
      w.field("prior_rate", rate_text(s.term, s.prior));
      w.field("rate", rate_text(s.term, f.report.calibration.theta[static_cast<Eigen::Index>(i)]));
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
}

// "combined": the mixture's report and each timing's held-out predictions.
void write_combined(JsonWriter& w, const costmodel::CalibrationReport& rep) {
  w.key("combined").begin_object();
  write_hypothesis_report(w, rep.combined);
  w.key("held_out").begin_array();
  for (size_t i = 0; i < rep.ids.size(); ++i) {
    w.begin_object();
    w.field("id", rep.ids[i]);
    w.field("measured_ms", rep.measured_ms[i]);
    w.field("loo_ms", rep.loo_ms[i]);
    w.field("loo_low_ms", rep.loo_low_ms[i]);
    w.field("loo_high_ms", rep.loo_high_ms[i]);
    w.field("group_loo_ms", rep.group_loo_ms[i]);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

// "replay": every step's predictions and differences, in step order (each predicted from the
// exports before its own), and their coverage.
void write_replay(JsonWriter& w, const costmodel::CalibrationReport& rep) {
  w.key("replay").begin_object();
  w.key("predictions").begin_array();
  for (const auto& replay : rep.replays)
    for (const auto& r : replay.rows) {
      w.begin_object();
      w.field("id", r.id);
      w.field("measured_ms", r.measured_ms);
      w.field("predicted_ms", r.predicted_ms);
      w.field("low_ms", r.low_ms);
      w.field("high_ms", r.high_ms);
      w.end_object();
    }
  w.end_array();
  w.key("differences").begin_array();
  for (const auto& replay : rep.replays)
    for (const auto& d : replay.differences) {
      w.begin_object();
      w.field("what", d.what);
      w.field("from", d.a);
      w.field("to", d.b);
      w.field("measured", d.measured);
      w.field("predicted", d.predicted);
      w.field("low", d.low);
      w.field("high", d.high);
      w.field("p_measured_sign", d.p_measured_sign);
      w.end_object();
    }
  w.end_array();
  const costmodel::ReplayCoverage cov = costmodel::replay_coverage(rep.replays);
  w.field("timings", cov.timings);
  w.field("inside_interval", cov.inside);
  w.field("median_abs_error", cov.median_abs_error);
  w.field("differences_with_measured_sign", cov.signs_right);
  w.end_object();
}

// "probes": the device's probes, if it lists any (none: no "probes" key).
void write_probes(JsonWriter& w, const costmodel::HypothesisSet& set, const costmodel::Predictor& pr) {
  const std::vector<costmodel::ProbeFigures> figs = costmodel::probe_figures(set, pr);
  if (!figs.empty()) w.key("probes").begin_array();
  for (const costmodel::ProbeFigures& f : figs) {
    w.begin_object();
    w.field("variant", f.probe->label);
    w.field("context", f.probe->context);
    w.field("ms", f.combined.latency_ms);
    w.field("low_ms", f.combined.low_ms);
    w.field("high_ms", f.combined.high_ms);
    w.key("each").begin_array();
    for (const auto& e : f.each) {
      w.begin_object();
      w.field("name", e.name);
      w.field("weight", e.weight);
      w.field("ms", e.prediction.latency_ms);
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  if (!figs.empty()) w.end_array();
}

}  // namespace

void write_hypotheses_json(const costmodel::HypothesisSet& set, const costmodel::CalibrationReport& rep,
                           const costmodel::Predictor& pr, JsonWriter& w) {
  w.key("hypotheses").begin_object();
  w.field("method", set.method);
  write_each_hypothesis(w, set, rep);
  write_combined(w, rep);
  write_replay(w, rep);
  write_probes(w, set, pr);
  w.end_object();
}

void print_interval_widths(const explorer::IntervalWidths& w, std::ostream& out) {
  std::string ctxs;
  for (int c : w.contexts) ctxs += (ctxs.empty() ? "" : " and ") + std::to_string(c);
  out << "\n90% interval half-widths on the design space (" << model::to_string(w.precision) << ", ctx " << ctxs
      << ", relative to the prediction): measured graphs " << pct(w.measured_median) << " median of " << w.measured
      << ", unmeasured " << pct(w.unmeasured_median) << " median of " << w.unmeasured << "\n";
}

void write_interval_widths_json(const explorer::IntervalWidths& w, JsonWriter& jw) {
  jw.key("interval_widths").begin_object();
  jw.field("precision", model::to_string(w.precision));
  jw.key("contexts").begin_array();
  for (int c : w.contexts) jw.value(c);
  jw.end_array();
  jw.field("measured_graphs", w.measured);
  jw.field("measured_median_half_width", w.measured_median);
  jw.field("unmeasured_graphs", w.unmeasured);
  jw.field("unmeasured_median_half_width", w.unmeasured_median);
  jw.end_object();
}

}  // namespace layoutx::cli
