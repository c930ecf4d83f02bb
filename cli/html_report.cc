#include "cli/html_report.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "cli/choice_output.h"
#include "cli/svg_chart.h"
#include "db/history_groups.h"
#include "model/variant.h"
#include "support/atomic_file.h"

namespace layoutx::cli {

namespace {

// Series colours.
const std::string kMeasured = "#1f77b4", kPredicted = "#ff7f0e", kRegression = "#d62728", kLoo = "#2ca02c",
                  kTie = "#999999", kNever = "#f4cccc";

std::string fixed(double v, int digits) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string label(const std::string& key) {
  model::Variant v = model::parse_variant(key);
  return short_name(v) + "/" + model::to_string(v.precision());
}

std::string key_title(const db::MeasurementKey& k) {
  return label(k.variant_key) + ", " + k.layer_type + ", ctx " + std::to_string(k.ctx) + " (" + k.device + ", " +
         k.model + ", " + k.boundary + ")";
}

// The page's bounds, whatever the database holds: a history plot draws at most kMaxPlotGroups
// shapes (groups of consecutive measurements beyond that, db/history_groups.h), at most
// kMaxHistoryCharts keys are plotted and kMaxTableRows listed (regressed keys first); the page
// says what it left out. At most about 48 KB a plot and 0.4 KB a row: under 3 MB for any database
// (2.3 MB for a million measurements over 612 keys, tests/report/html_report_browser.py).
constexpr size_t kMaxPlotGroups = 120, kMaxHistoryCharts = 48, kMaxTableRows = 400;

// Whether each measurement of a key is a regression: slower than the previous by more than the
// tolerance, or the latest above the prediction interval.
std::vector<bool> regressed_measurements(const db::RegressRow& row, double tolerance) {
  const size_t n = row.history_ms.size();
  std::vector<bool> bad(n, false);
  for (size_t i = 1; i < n; ++i) {
    const double prev = row.history_ms[i - 1];
    bad[i] = prev > 0 && (row.history_ms[i] - prev) / prev > tolerance;
  }
  if (n && row.predicted && row.history_ms[n - 1] > row.predicted->high_ms) bad[n - 1] = true;
  return bad;
}

std::string group_tip(const db::HistoryGroup& g) {
  if (g.count == 1)
    return "#" + std::to_string(g.first + 1) + ": " + fixed(g.median_ms, 3) + " ms, ingested " + g.first_at +
           (g.regressions ? " (regression)" : "");
  return "#" + std::to_string(g.first + 1) + "-" + std::to_string(g.last + 1) + " (" + std::to_string(g.count) +
         " measurements, ingested " + g.first_at + " to " + g.last_at + "): median " + fixed(g.median_ms, 3) +
         " ms, 10-90% [" + fixed(g.p10_ms, 3) + ", " + fixed(g.p90_ms, 3) + "], min " + fixed(g.min_ms, 3) + ", max " +
         fixed(g.max_ms, 3) + (g.regressions ? ", " + std::to_string(g.regressions) + " regressions" : "");
}

// 1. One key's history against its prediction: measurements in ingest order (or, past
//    kMaxPlotGroups of them, groups of consecutive ones: median with a 10-90% bar), the interval
//    as a band, regressions red.
std::string history_chart(const db::RegressRow& row, double tolerance, size_t index) {
  const size_t n = row.history_ms.size();
  const auto groups = db::group_history(row.history_ms, row.history_at, regressed_measurements(row, tolerance), kMaxPlotGroups);
  const bool grouped = groups.size() < n;
  double lo = *std::min_element(row.history_ms.begin(), row.history_ms.end());
  double hi = *std::max_element(row.history_ms.begin(), row.history_ms.end());
  if (grouped) {  // the bars, not the outliers, set the scale
    lo = hi = groups.front().median_ms;
    for (const auto& g : groups) lo = std::min(lo, g.p10_ms), hi = std::max(hi, g.p90_ms);
  }
  if (row.predicted) {
    lo = std::min(lo, row.predicted->low_ms);
    hi = std::max(hi, row.predicted->high_ms);
  }
  auto [ylo, yhi] = padded_range(lo, hi, true);
  ChartAxis x{grouped ? "measurement # (ingest order; median and 10-90% of " + std::to_string(groups.front().count) +
                            " a point)"
                      : "measurement # (ingest order)",
              0.5, static_cast<double>(n) + 0.5, {}};
  const size_t step = n <= 12 ? 1 : (n + 11) / 12;  // whole-number ticks, at most about 12
  for (size_t i = 1; i <= n; i += step) x.categories.emplace_back(static_cast<double>(i), std::to_string(i));
  SvgChart c("history-" + std::to_string(index), key_title(row.key), x, {"latency (ms)", ylo, yhi, {}}, 640, 260);
  if (row.predicted) {
    const std::vector<double> xs = {0.5, static_cast<double>(n) + 0.5};
    c.band(xs, {row.predicted->low_ms, row.predicted->low_ms}, {row.predicted->high_ms, row.predicted->high_ms}, kPredicted,
           "90% interval");
    c.line(xs, {row.predicted->ms, row.predicted->ms}, kPredicted, "predicted (" + row.predicted->calibration_id + ")", true);
  }
  std::vector<double> ox, oy, rx, ry, bx, blo, bhi;
  std::vector<std::string> ot, rt;
  for (size_t k = 0; k < groups.size(); ++k) {
    const auto& g = groups[k];
    const double xi = static_cast<double>(g.first + g.last) / 2 + 1;
    // A group is red when its median is slower than the previous group's by more than the
    // tolerance (one measurement a group: exactly the per-measurement rule), and the last group
    // when the key's verdict is a regression; single slow measurements inside a group of noisy
    // ones are counted in its tip, not painted.
    const double prev = k ? groups[k - 1].median_ms : 0;
    const bool bad = (prev > 0 && (g.median_ms - prev) / prev > tolerance) ||
                     (k + 1 == groups.size() && (grouped ? row.regression : g.regressions > 0));
    (bad ? rx : ox).push_back(xi);
    (bad ? ry : oy).push_back(g.median_ms);
    (bad ? rt : ot).push_back(group_tip(g));
    if (grouped) bx.push_back(xi), blo.push_back(g.p10_ms), bhi.push_back(g.p90_ms);
  }
  c.error_bars(bx, blo, bhi, kMeasured);
  c.points(ox, oy, kMeasured, grouped ? "measured (median, 10-90%)" : "measured", ot, grouped ? 3 : 4);
  if (!rx.empty()) c.points(rx, ry, kRegression, grouped ? "slower group (regression)" : "regression", rt, 6);
  return c.svg();
}

// The keys plotted (or listed): regressed ones first, then the others, in the db's order, at most `cap`.
std::vector<const db::RegressRow*> first_keys(const std::vector<db::RegressRow>& rows, size_t cap) {
  std::vector<const db::RegressRow*> out;
  for (bool regressed : {true, false})
    for (const auto& r : rows)
      if (r.regression == regressed && out.size() < cap) out.push_back(&r);
  return out;
}

// 2. Calibration error over time: mean |predicted - measured| / measured of each calibration's
//    stored predictions, in order of first use, beside the fit's leave-one-out error.
std::string calibration_chart(const db::DeviceModelReport& r, size_t index) {
  std::vector<double> xs, err, loo_x, loo;
  std::vector<std::string> tips, loo_tips;
  ChartAxis x{"calibration, in order of first use (id)", 0.5, static_cast<double>(r.calibration.size()) + 0.5, {}};
  double hi = 0;
  for (size_t i = 0; i < r.calibration.size(); ++i) {
    const auto& e = r.calibration[i];
    const double xi = static_cast<double>(i + 1);
    x.categories.emplace_back(xi, e.calibration_id);
    xs.push_back(xi);
    err.push_back(100 * e.mean_abs_rel_error);
    tips.push_back(e.calibration_id + ", first used " + e.first_used + ": " + fixed(100 * e.mean_abs_rel_error, 1) +
                   "% over " + std::to_string(e.predictions) + " predictions");
    hi = std::max(hi, err.back());
    if (e.loo_error) {
      loo_x.push_back(xi);
      loo.push_back(100 * *e.loo_error);
      loo_tips.push_back(e.calibration_id + ": leave-one-out median " + fixed(100 * *e.loo_error, 1) + "%");
      hi = std::max(hi, loo.back());
    }
  }
  auto [ylo, yhi] = padded_range(0, hi, true);
  SvgChart c("calibration-" + std::to_string(index), "calibration error over time: " + r.device + " / " + r.model, x,
             {"error (% of measured)", ylo, yhi, {}}, 640);
  c.line(xs, err, kMeasured, "");
  c.points(xs, err, kMeasured, "stored predictions", tips);
  c.points(loo_x, loo, kLoo, "leave-one-out (fit)", loo_tips, 5);
  return c.svg();
}

// 3. Coverage: measurements per preset x precision x layer type; never-measured cells marked.
std::string coverage_chart(const db::DeviceModelReport& r, size_t index) {
  const std::vector<std::string> precisions = {"fp16", "w8a16", "w4a16"};
  ChartAxis x{"precision (weights / activations)", -0.5, 2.5, {}};
  for (size_t i = 0; i < precisions.size(); ++i) x.categories.emplace_back(static_cast<double>(i), precisions[i]);
  std::vector<std::string> rows;
  for (const auto& cell : r.presets) {
    const std::string row = cell.layer_type + " " + cell.preset;
    if (std::find(rows.begin(), rows.end(), row) == rows.end()) rows.push_back(row);
  }
  ChartAxis y{"layer type, preset", -0.5, static_cast<double>(rows.size()) - 0.5, {}};
  for (size_t i = 0; i < rows.size(); ++i) y.categories.emplace_back(static_cast<double>(rows.size() - 1 - i), rows[i]);
  int most = 1;
  for (const auto& cell : r.presets) most = std::max(most, cell.measurements);
  SvgChart c("coverage-" + std::to_string(index), "design-space coverage: " + r.device + " / " + r.model, x, y, 560,
             60 + 34 * static_cast<int>(rows.size()) + 60);
  for (const auto& cell : r.presets) {
    const double cx = static_cast<double>(std::find(precisions.begin(), precisions.end(), cell.precision) - precisions.begin());
    const std::string row = cell.layer_type + " " + cell.preset;
    const double cy = static_cast<double>(rows.size() - 1 - static_cast<size_t>(std::find(rows.begin(), rows.end(), row) - rows.begin()));
    const int shade = 235 - static_cast<int>(150.0 * cell.measurements / most);
    char color[16];
    std::snprintf(color, sizeof color, "#%02x%02xff", shade, shade);
    c.rect(cx - 0.5, cy - 0.5, cx + 0.5, cy + 0.5, cell.measurements ? color : kNever,
           row + " " + cell.precision + ": " + std::to_string(cell.measurements) + " measurements",
           cell.measurements ? std::to_string(cell.measurements) : "never");
  }
  c.legend_entry("#5555ff", "measured (count)");
  c.legend_entry(kNever, "never measured");
  return c.svg();
}

// 4. The latest decisions: each layer type's choice and its runner-up (ms per layer), the margin
//    between them written beside; a tie in grey.
std::string decisions_chart(const std::vector<ReportDecision>& ds) {
  double lo = 1e300, hi = 0;
  for (const auto& d : ds) {
    lo = std::min({lo, d.chosen_ms, d.runner_up_ms > 0 ? d.runner_up_ms : d.chosen_ms});
    hi = std::max({hi, d.chosen_ms, d.runner_up_ms});
  }
  auto [xlo, xhi] = padded_range(lo, hi * 1.15, true);  // room for the margin notes
  ChartAxis y{"decision (precision, layer, ctx)", -0.5, static_cast<double>(ds.size()) - 0.5, {}};
  for (size_t i = 0; i < ds.size(); ++i)
    y.categories.emplace_back(static_cast<double>(ds.size() - 1 - i),
                              ds[i].precision + " " + ds[i].layer + " " + std::to_string(ds[i].ctx));
  SvgChart c("decisions", "latest decisions: the choice, its runner-up and the margin",
             {"latency (ms per layer)", xlo, xhi, {}}, y, 720, 80 + 30 * static_cast<int>(ds.size()) + 40);
  std::vector<double> cx[2], cy[2], rx, ry;
  std::vector<std::string> ct[2], rt;
  for (size_t i = 0; i < ds.size(); ++i) {
    const auto& d = ds[i];
    const double yi = static_cast<double>(ds.size() - 1 - i);
    const std::string what = d.model + " " + d.precision + " " + d.layer + " ctx " + std::to_string(d.ctx);
    cx[d.tie].push_back(d.chosen_ms);
    cy[d.tie].push_back(yi);
    ct[d.tie].push_back(what + ": chosen " + d.chosen + " " + fixed(d.chosen_ms, 3) + " ms");
    if (!d.runner_up.empty()) {
      rx.push_back(d.runner_up_ms);
      ry.push_back(yi);
      rt.push_back(what + ": runner-up " + d.runner_up + " " + fixed(d.runner_up_ms, 3) + " ms");
      c.line({d.chosen_ms, d.runner_up_ms}, {yi, yi}, kTie, "");
    }
    c.text(std::max(d.chosen_ms, d.runner_up_ms), yi,
           d.chosen + ", margin " + (d.margin_ms >= 0 ? "+" : "") + fixed(d.margin_ms, 3) + " ms" + (d.tie ? " (tie)" : ""));
  }
  // The runner-up larger and underneath, so a chosen point on top of it (a tie) leaves a ring.
  c.points(rx, ry, kPredicted, "runner-up", rt, 7);
  c.points(cx[0], cy[0], kLoo, "chosen (decisive)", ct[0], 4);
  c.points(cx[1], cy[1], kTie, "chosen (a tie)", ct[1], 4);
  return c.svg();
}

// The page's head and style, and the calibrations its predictions come from.
std::string page_head(const HtmlReportInput& in) {
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>layoutx report</title>\n"
      "<style>body{font-family:sans-serif;margin:24px;max-width:1400px}svg.plot{background:#fff;border:1px solid #ddd;"
      "margin:6px}table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px}"
      ".reg{color:#d62728;font-weight:bold}.grid{display:flex;flex-wrap:wrap}</style></head><body>\n";
  h += "<h1>layoutx report</h1>\n<p>database <code>" + html_escape(in.database) + "</code>, generated " +
       html_escape(in.generated_at) + ". Predictions from:</p><ul>\n";
  for (const auto& [device, src] : in.calibrations)
    h += "<li>" + html_escape(device) + ": " +
         html_escape(src.first.empty() ? src.second : "calibration " + src.first + " (" + src.second + ")") + "</li>\n";
  h += "</ul>\n";
  return h;
}

// One row of the history section's table: a key's latest measurement against its prediction.
std::string history_row(const db::RegressRow& r) {
  return "<tr><td>" + html_escape(key_title(r.key)) + "</td><td>" + std::to_string(r.history_ms.size()) + "</td><td>" +
         fixed(r.latest_ms, 3) + "</td><td>" +
         (r.predicted ? fixed(r.predicted->ms, 3) + " [" + fixed(r.predicted->low_ms, 3) + ", " +
                            fixed(r.predicted->high_ms, 3) + "]"
                      : "-") +
         "</td><td>" + html_escape(r.prediction_status) + "</td><td" + (r.regression || r.prediction_failed ? " class=\"reg\">" : ">") +
         db::verdict(r) +
         "</td></tr>\n";
}

// 1. Measured vs predicted: a chart per key (capped), then a table row per key (capped).
std::string history_section(const HtmlReportInput& in) {
  int regressions = 0;
  for (const auto& r : in.regress.rows) regressions += r.regression;
  std::string h = "<section id=\"history\"><h2>Measured vs predicted, per variant over time</h2>\n<p>" +
       std::to_string(in.regress.rows.size()) + " keys, " + std::to_string(regressions) +
       " regressed (slower than the previous measurement by more than " + fixed(100 * in.tolerance, 1) +
       "%, or the latest above the prediction interval).</p>\n<div class=\"grid\">\n";
  const auto plotted = first_keys(in.regress.rows, kMaxHistoryCharts);
  for (size_t i = 0; i < plotted.size(); ++i) h += history_chart(*plotted[i], in.tolerance, i);
  h += "</div>\n";
  if (plotted.size() < in.regress.rows.size())
    h += "<p class=\"capped\">" + std::to_string(plotted.size()) + " of " + std::to_string(in.regress.rows.size()) +
         " keys plotted (regressed ones first; at most " + std::to_string(kMaxHistoryCharts) +
         "); <code>layoutx regress --json</code> lists every key.</p>\n";
  h += "<table><tr><th>key</th><th>n</th><th>latest ms</th><th>predicted ms [interval]</th><th>vs prediction</th>"
       "<th>verdict</th></tr>\n";
  const auto listed = first_keys(in.regress.rows, kMaxTableRows);
  for (const db::RegressRow* row : listed) h += history_row(*row);
  h += "</table>\n";
  if (listed.size() < in.regress.rows.size())
    h += "<p class=\"capped\">" + std::to_string(listed.size()) + " of " + std::to_string(in.regress.rows.size()) +
         " keys listed (regressed ones first; at most " + std::to_string(kMaxTableRows) + ").</p>\n";
  h += "</section>\n";
  return h;
}

// 2. Calibration error over time, per (device, model).
std::string calibration_section(const HtmlReportInput& in) {
  std::string h = "<section id=\"calibration\"><h2>Calibration error over time</h2>\n";
  for (size_t i = 0; i < in.reports.size(); ++i) {
    if (in.reports[i].calibration.empty())
      h += "<p>" + html_escape(in.reports[i].device + " / " + in.reports[i].model) +
           ": no stored predictions yet (<code>layoutx regress --record-predictions</code> records them).</p>\n";
    else
      h += calibration_chart(in.reports[i], i);
  }
  h += "</section>\n";
  return h;
}

// 3. Design-space coverage, per (device, model): what was measured and the preset cells never measured.
std::string coverage_section(const HtmlReportInput& in) {
  std::string h = "<section id=\"coverage\"><h2>Design-space coverage</h2>\n";
  for (size_t i = 0; i < in.reports.size(); ++i) {
    const auto& r = in.reports[i];
    h += "<p>" + html_escape(r.device + " / " + r.model) + ": " + std::to_string(r.space_measured) + " of " +
         std::to_string(r.space_size) + " (variant, layer type) pairs measured (" +
         fixed(100.0 * r.space_measured / std::max(1, r.space_size), 1) + "%); never measured preset cells:";
    for (const auto& c : r.presets)
      if (!c.measurements) h += " " + html_escape(c.preset + "/" + c.precision + " " + c.layer_type) + ";";
    h += "</p>\n" + coverage_chart(r, i);
  }
  h += "</section>\n";
  return h;
}

// 4. The latest decisions: their chart and table, or why there are none.
std::string decisions_section(const HtmlReportInput& in) {
  std::string h = "<section id=\"decisions\"><h2>Latest decisions</h2>\n<p>What <code>layoutx select --no-fidelity</code> "
       "chooses now with the calibrations above, per layer type, and its margin over the runner-up.</p>\n";
  if (in.decisions.empty()) {
    h += "<p>No decisions: no device in the database has a calibrated cost model.</p>\n";
  } else {
    h += decisions_chart(in.decisions);
    h += "<table><tr><th>device</th><th>model</th><th>precision</th><th>layer</th><th>ctx</th><th>chosen</th><th>ms</th>"
         "<th>runner-up</th><th>ms</th><th>margin ms</th><th>tie</th><th>calibration</th></tr>\n";
    for (const auto& d : in.decisions)
      h += "<tr><td>" + html_escape(d.device) + "</td><td>" + html_escape(d.model) + "</td><td>" + d.precision + "</td><td>" +
           d.layer + "</td><td>" + std::to_string(d.ctx) + "</td><td>" + html_escape(d.chosen) + "</td><td>" +
           fixed(d.chosen_ms, 3) + "</td><td>" + html_escape(d.runner_up) + "</td><td>" + fixed(d.runner_up_ms, 3) +
           "</td><td>" + fixed(d.margin_ms, 3) + "</td><td>" + (d.tie ? "yes" : "no") + "</td><td>" +
           html_escape(d.calibration_id) + "</td></tr>\n";
    h += "</table>\n";
  }
  h += "</section>\n";
  return h;
}

}  // namespace

std::string render_html_report(const HtmlReportInput& in) {
  return page_head(in) + history_section(in) + calibration_section(in) + coverage_section(in) + decisions_section(in) +
         "</body></html>\n";
}

std::string write_html_report(const std::string& dir, const HtmlReportInput& in) {
  ensure_directory(dir);
  const std::string path = (std::filesystem::path(dir) / "index.html").string();
  write_file_atomically(path, render_html_report(in));
  return path;
}

}  // namespace layoutx::cli
