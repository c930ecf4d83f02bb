// A small SVG chart for the HTML report: a titled plot area with two axes (numeric with ticks,
// or categorical), each with a title that carries its unit, shapes in data coordinates, and a
// legend. No script: the page is static. Markup the report test checks: <svg class="plot">,
// <text class="axis-title x|y">, <g class="legend"> with one <g class="legend-entry"> per series.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace layoutx::cli {

struct ChartAxis {
  std::string title;  // with its unit, e.g. "latency (ms)"
  double lo = 0, hi = 1;
  // Categorical axes: a label at each listed data coordinate instead of numeric ticks.
  std::vector<std::pair<double, std::string>> categories;
};

class SvgChart {
 public:
  SvgChart(std::string id, std::string title, ChartAxis x, ChartAxis y, int width = 560, int height = 300);

  // Series; each adds a legend entry when `label` is not empty. Tooltips (SVG <title>) per point.
  void band(const std::vector<double>& xs, const std::vector<double>& lo, const std::vector<double>& hi,
            const std::string& color, const std::string& label);
  void line(const std::vector<double>& xs, const std::vector<double>& ys, const std::string& color,
            const std::string& label, bool dashed = false);
  void points(const std::vector<double>& xs, const std::vector<double>& ys, const std::string& color,
              const std::string& label, const std::vector<std::string>& tooltips = {}, double radius = 4);
  void error_bars(const std::vector<double>& xs, const std::vector<double>& lo, const std::vector<double>& hi,
                  const std::string& color);
  // A rectangle [x0, x1] x [y0, y1] in data coordinates, with optional text centred in it.
  void rect(double x0, double y0, double x1, double y1, const std::string& color, const std::string& tooltip,
            const std::string& text = "");
  void legend_entry(const std::string& color, const std::string& label);
  // A note at (x, y) in data coordinates, a little right of it.
  void text(double x, double y, const std::string& t);

  std::string svg() const;

 private:
  double px(double x) const;
  double py(double y) const;
  std::string id_, title_;
  ChartAxis x_, y_;
  int width_, height_;
  int left_ = 70;  // px left of the plot area: room for the y tick labels
  std::string body_;
  std::vector<std::pair<std::string, std::string>> legend_;  // color, label
};

// Text escaped for HTML and SVG.
std::string html_escape(const std::string& s);

// "Nice" axis limits: [0 or below the data, above the data] with a margin.
std::pair<double, double> padded_range(double lo, double hi, bool from_zero);

}  // namespace layoutx::cli
