#include "cli/public_joint_output.h"

#include <algorithm>
#include <iostream>

#include "cli/table.h"
#include "support/json_writer.h"

namespace layoutx::cli {

namespace {

std::string pct(double x) { return (x > 0 ? "+" : "") + fmt(100 * x, 0) + "%"; }
std::string range(const costmodel::JointQuantile& q, int d) { return "[" + fmt(q.low, d) + ", " + fmt(q.high, d) + "]"; }

void write_quantile(JsonWriter& w, const char* key, const costmodel::JointQuantile& q) {
  w.key(key).begin_object();
  w.field("median", q.median);
  w.key("interval").value(std::vector<double>{q.low, q.high});
  w.end_object();
}

}  // namespace

void write_public_joint_json(JsonWriter& w, const explorer::PublicJoint& j, const std::string& source) {
  w.field("team_calibration", source);
  w.field("interval_level", j.level);
  w.key("terms").begin_array();
  for (const auto& t : j.terms) {
    w.begin_object();
    w.field("kind", t.kind);
    w.field("key", t.key);
    w.field("prior", t.prior);
    w.field("prior_log_sd", t.prior_log_sd);
    write_quantile(w, "posterior", t.posterior);
    w.field("decode_rates", t.rates);
    w.field("floors", t.floors);
    w.field("pulled_most_by", t.pulled_by);
    w.field("pull", t.pull);
    w.end_object();
  }
  w.end_array();
  w.key("records").begin_array();
  for (const auto& r : j.records) {
    w.begin_object();
    w.field("key", r.record->key);
    w.field("chip", r.record->chip);
    w.field("exporter", r.record->layout.exporter);
    w.field("floor", r.floor);
    w.field("part", r.part);
    w.field(r.part ? "published_ms_per_graph" : "published_ms_per_token", r.published_ms);
    write_quantile(w, "fitted_ms", r.fitted);
    write_quantile(w, "held_out_ms", r.held_out);
    if (r.floor) {
      w.field("kept", r.kept);
      w.field("kept_held_out", r.kept_held_out);
    } else {
      w.field("error", r.error);
      w.field("held_out_error", r.held_out_error);
    }
    w.end_object();
  }
  w.end_array();
  w.key("sources_held_out").begin_array();
  for (const auto& s : j.sources) {
    w.begin_object();
    w.field("id", s.id);
    w.field("decode_rates", s.rates);
    if (s.rates > 0) {
      w.field("median_abs_error", s.median_abs_error);
      w.field("median_error", s.median_error);
    }
    w.end_object();
  }
  w.end_array();
  w.key("summary").begin_object();
  w.field("decode_rates", j.rates);
  w.field("median_abs_error", j.median_abs_error);
  w.field("held_out_median_abs_error", j.held_out_median_abs_error);
  w.field("held_out_median_error", j.held_out_median_error);
  w.field("floors", j.floors);
  w.field("floors_kept", j.floors_kept);
  w.field("floors_kept_held_out", j.floors_kept_held_out);
  w.field("part_times", j.parts);
  w.field("parts_median_abs_error", j.parts_median_abs_error);
  w.field("parts_held_out_median_abs_error", j.parts_held_out_median_abs_error);
  w.end_object();
  w.key("hypothesis_axes").begin_array();
  for (const auto& a : j.axes) {
    w.begin_object();
    w.field("position", static_cast<int64_t>(a.position));
    w.field("value", a.value);
    w.field("team_weight", a.team_weight);
    w.field("joint_weight", a.joint_weight);
    w.end_object();
  }
  w.end_array();
  w.key("hypotheses").begin_array();
  for (size_t h = 0; h < j.names.size(); ++h) {
    w.begin_object();
    w.field("name", j.names[h]);
    w.field("team_weight", j.team_weights[h]);
    w.field("joint_weight", j.joint_weights[h]);
    w.end_object();
  }
  w.end_array();
}

namespace {

void write_fit(JsonWriter& w, const char* key, const costmodel::HypothesisReport& r) {
  w.key(key).begin_object();
  w.field("max_abs_resid_sd", r.max_abs_resid_sd);
  w.field("loo_median_abs_error", r.loo.median_abs);
  w.field("loo_max_abs_error", r.loo.max_abs);
  w.field("loo_covered", r.loo.covered);
  w.field("loo_count", r.loo.count);
  w.field("group_loo_median_abs_error", r.group_loo.median_abs);
  w.end_object();
}

}  // namespace

void write_team_fit_both_ways(JsonWriter& w, const costmodel::HypothesisReport& team,
                              const costmodel::HypothesisReport& joint) {
  w.key("team_timings").begin_object();
  write_fit(w, "team_weights", team);
  write_fit(w, "joint_weights", joint);
  w.end_object();
}

void print_team_fit_both_ways(const costmodel::HypothesisReport& team, const costmodel::HypothesisReport& joint,
                              std::ostream& out) {
  out << "\nthe team's timings under the team's weights and under the joint ones (the combined mixture):\n";
  Table t({"weights", "in-sample max |resid| sd", "LOO median |error|", "LOO max |error|", "LOO in 90%",
           "group LOO median |error|"});
  for (const auto* r : {&team, &joint})
    t.add({r == &team ? "team" : "team + public", fmt(r->max_abs_resid_sd, 2), fmt(100 * r->loo.median_abs, 1) + "%",
           fmt(100 * r->loo.max_abs, 1) + "%", std::to_string(r->loo.covered) + " of " + std::to_string(r->loo.count),
           fmt(100 * r->group_loo.median_abs, 1) + "%"});
  t.print(out);
}

void print_public_joint(const explorer::PublicJoint& j, const std::string& chip, const std::string& source, bool json) {
  if (json) {
    JsonWriter w(std::cout);
    w.begin_object();
    write_public_joint_json(w, j, source);
    w.end_object();
    return;
  }
  const int level = static_cast<int>(100 * j.level + 0.5);
  std::cout << "joint calibration: the hypotheses of " << source << " (coefficients and weights from the team's timings), "
            << "weighed again by " << j.rates << " public decode rates, " << j.floors << " CI floors and " << j.parts
            << " part times of per-graph sets, with a factor per chip, a term per exporter and a level per set "
            << "(priors below; " << level << "% intervals)\n\n";
  Table terms({"term", "prior", "prior log-sd", "posterior", "interval", "rates", "floors", "pulled most by", "pull"});
  for (const auto& t : j.terms)
    terms.add({t.kind + " " + t.key, fmt(t.prior, 2), fmt(t.prior_log_sd, 2), fmt(t.posterior.median, 2),
               range(t.posterior, 2), std::to_string(t.rates), std::to_string(t.floors), t.pulled_by, pct(t.pull)});
  terms.print(std::cout);
  std::cout << "\n(a chip's factor: its time for what " << chip << " does in 1 ms; an exporter's term: its time over "
            << "layoutx's price of its layout; a set's level: its parts' time over layoutx's price, nearly free, so "
            << "the parts weigh the hypotheses by their shape alone; pull: the term's move when that record is left out)\n\n";
  Table recs({"record", "published ms", "fitted ms", "interval", "error / bound", "left out ms", "left-out error / bound"});
  for (const auto& r : j.records) {
    const auto bound = [&](bool kept) { return std::string(kept ? "kept" : "broken"); };
    recs.add({r.record->key, (r.floor ? "<= " : "") + fmt(r.published_ms, 2), fmt(r.fitted.median, 2), range(r.fitted, 2),
              r.floor ? bound(r.kept) : pct(r.error), fmt(r.held_out.median, 2),
              r.floor ? bound(r.kept_held_out) : pct(r.held_out_error)});
  }
  recs.print(std::cout);
  std::cout << "\ndecode rates: " << j.rates << ", median |error| in-sample " << fmt(100 * j.median_abs_error, 0)
            << "%, each left out " << fmt(100 * j.held_out_median_abs_error, 0) << "% (median error "
            << pct(j.held_out_median_error) << ")\nCI floors kept by the fitted median: " << j.floors_kept << " of "
            << j.floors << " (each left out: " << j.floors_kept_held_out << ")\n";
  if (j.parts > 0)
    std::cout << "part times (ms per graph, under their set's level): " << j.parts << ", median |error| in-sample "
              << fmt(100 * j.parts_median_abs_error, 0) << "%, each left out "
              << fmt(100 * j.parts_held_out_median_abs_error, 0) << "%\n";
  std::cout << "\n";
  Table srcs({"publication left out", "decode rates", "median |error|", "median error"});
  for (const auto& s : j.sources)
    if (s.rates > 0) srcs.add({s.id, std::to_string(s.rates), fmt(100 * s.median_abs_error, 0) + "%", pct(s.median_error)});
  srcs.print(std::cout);
  std::cout << "\nwhat the records say of the hypotheses (weight of each value of an axis, from the team's timings "
               "and with the public records):\n";
  Table axes({"axis", "value", "team weight", "joint weight"});
  for (const auto& a : j.axes)
    axes.add({std::to_string(a.position + 1), a.value, fmt(a.team_weight, 3), fmt(a.joint_weight, 3)});
  axes.print(std::cout);
}

}  // namespace layoutx::cli
