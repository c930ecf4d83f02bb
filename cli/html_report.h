// `layoutx report --html DIR`: one static page (DIR/index.html, no script, no server) with SVG
// plots of what the database holds: measured vs predicted per variant over time (intervals,
// regressions highlighted), calibration error over time, design-space coverage (what was never
// measured), and the latest decisions with their margins. Built from the db layer's queries only,
// so it is the same page whichever backend holds the data.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "db/regress.h"
#include "db/report.h"

namespace layoutx::cli {

// What `select --no-fidelity` chooses now for one layer type (the report's "latest decisions").
struct ReportDecision {
  std::string device, model, precision, layer;
  int ctx = 0;
  std::string chosen, runner_up;  // short variant names
  double chosen_ms = 0, runner_up_ms = 0, margin_ms = 0;  // ms per decode step of one layer
  bool tie = false;
  std::string calibration_id;
};

struct HtmlReportInput {
  std::string database;      // as the user named it (never a connection string's password)
  std::string generated_at;  // ISO-8601 UTC
  std::vector<db::DeviceModelReport> reports;
  db::RegressResult regress;
  double tolerance = 0.03;
  std::map<std::string, std::pair<std::string, std::string>> calibrations;  // device -> (id, source)
  std::vector<ReportDecision> decisions;
};

std::string render_html_report(const HtmlReportInput& in);
// Writes DIR/index.html atomically (DIR is created if missing). Returns the file's path.
std::string write_html_report(const std::string& dir, const HtmlReportInput& in);

}  // namespace layoutx::cli
