#include "cli/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace layoutx::cli {

namespace {

// Margins of the plot area inside the SVG (px): room for tick labels, axis titles, legend.
constexpr int kRight = 170, kTop = 34, kBottom = 58;  // the left margin depends on the y labels

std::string num(double v, int digits = 4) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

// About five round tick values covering [lo, hi].
std::vector<double> ticks(double lo, double hi) {
  std::vector<double> out;
  if (!(hi > lo)) return {lo};
  const double raw = (hi - lo) / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push_back(std::fabs(t) < step * 1e-9 ? 0 : t);
  return out;
}

}  // namespace

std::string html_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::pair<double, double> padded_range(double lo, double hi, bool from_zero) {
  if (from_zero) lo = std::min(0.0, lo);
  if (!(hi > lo)) hi = lo + 1;
  const double pad = (hi - lo) * 0.08;
  return {from_zero && lo >= 0 ? lo : lo - pad, hi + pad};
}

SvgChart::SvgChart(std::string id, std::string title, ChartAxis x, ChartAxis y, int width, int height)
    : id_(std::move(id)), title_(std::move(title)), x_(std::move(x)), y_(std::move(y)), width_(width), height_(height) {
  if (!(x_.hi > x_.lo)) x_.hi = x_.lo + 1;
  if (!(y_.hi > y_.lo)) y_.hi = y_.lo + 1;
  size_t longest = 6;
  for (const auto& c : y_.categories) longest = std::max(longest, c.second.size());
  left_ = 36 + static_cast<int>(6.2 * static_cast<double>(longest));
}

double SvgChart::px(double x) const { return left_ + (x - x_.lo) / (x_.hi - x_.lo) * (width_ - left_ - kRight); }
double SvgChart::py(double y) const { return height_ - kBottom - (y - y_.lo) / (y_.hi - y_.lo) * (height_ - kTop - kBottom); }

void SvgChart::text(double x, double y, const std::string& t) {
  body_ += "<text class=\"note\" x=\"" + num(px(x) + 6, 6) + "\" y=\"" + num(py(y) + 4, 6) + "\" font-size=\"10\">" +
           html_escape(t) + "</text>\n";
}

void SvgChart::legend_entry(const std::string& color, const std::string& label) {
  if (!label.empty()) legend_.emplace_back(color, label);
}

void SvgChart::band(const std::vector<double>& xs, const std::vector<double>& lo, const std::vector<double>& hi,
                    const std::string& color, const std::string& label) {
  if (xs.empty()) return;
  std::string pts;
  for (size_t i = 0; i < xs.size(); ++i) pts += num(px(xs[i]), 6) + "," + num(py(hi[i]), 6) + " ";
  for (size_t i = xs.size(); i-- > 0;) pts += num(px(xs[i]), 6) + "," + num(py(lo[i]), 6) + " ";
  body_ += "<polygon class=\"band\" points=\"" + pts + "\" fill=\"" + color + "\" fill-opacity=\"0.25\" stroke=\"none\"/>\n";
  legend_entry(color, label);
}

void SvgChart::line(const std::vector<double>& xs, const std::vector<double>& ys, const std::string& color,
                    const std::string& label, bool dashed) {
  if (xs.empty()) return;
  std::string pts;
  for (size_t i = 0; i < xs.size(); ++i) pts += num(px(xs[i]), 6) + "," + num(py(ys[i]), 6) + " ";
  body_ += "<polyline class=\"series\" points=\"" + pts + "\" fill=\"none\" stroke=\"" + color + "\" stroke-width=\"1.5\"" +
           (dashed ? " stroke-dasharray=\"5,3\"" : "") + "/>\n";
  legend_entry(color, label);
}

void SvgChart::points(const std::vector<double>& xs, const std::vector<double>& ys, const std::string& color,
                      const std::string& label, const std::vector<std::string>& tooltips, double radius) {
  for (size_t i = 0; i < xs.size(); ++i) {
    body_ += "<circle class=\"point\" cx=\"" + num(px(xs[i]), 6) + "\" cy=\"" + num(py(ys[i]), 6) + "\" r=\"" +
             num(radius) + "\" fill=\"" + color + "\">";
    if (i < tooltips.size()) body_ += "<title>" + html_escape(tooltips[i]) + "</title>";
    body_ += "</circle>\n";
  }
  legend_entry(color, label);
}

void SvgChart::error_bars(const std::vector<double>& xs, const std::vector<double>& lo, const std::vector<double>& hi,
                          const std::string& color) {
  for (size_t i = 0; i < xs.size(); ++i) {
    const std::string x = num(px(xs[i]), 6);
    body_ += "<line class=\"errorbar\" x1=\"" + x + "\" x2=\"" + x + "\" y1=\"" + num(py(lo[i]), 6) + "\" y2=\"" +
             num(py(hi[i]), 6) + "\" stroke=\"" + color + "\" stroke-width=\"1.5\"/>\n";
  }
}

void SvgChart::rect(double x0, double y0, double x1, double y1, const std::string& color, const std::string& tooltip,
                    const std::string& text) {
  const double l = std::min(px(x0), px(x1)), r = std::max(px(x0), px(x1));
  const double t = std::min(py(y0), py(y1)), b = std::max(py(y0), py(y1));
  body_ += "<rect class=\"cell\" x=\"" + num(l, 6) + "\" y=\"" + num(t, 6) + "\" width=\"" + num(r - l, 6) +
           "\" height=\"" + num(b - t, 6) + "\" fill=\"" + color + "\" stroke=\"#fff\"><title>" + html_escape(tooltip) +
           "</title></rect>\n";
  if (!text.empty())
    body_ += "<text x=\"" + num((l + r) / 2, 6) + "\" y=\"" + num((t + b) / 2 + 4, 6) +
             "\" text-anchor=\"middle\" font-size=\"11\">" + html_escape(text) + "</text>\n";
}

std::string SvgChart::svg() const {
  const int w = width_, h = height_;
  const double x0 = left_, x1 = w - kRight, y0 = h - kBottom, y1 = kTop;
  std::string s = "<svg class=\"plot\" id=\"" + html_escape(id_) + "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                  std::to_string(w) + "\" height=\"" + std::to_string(h) + "\" viewBox=\"0 0 " + std::to_string(w) + " " +
                  std::to_string(h) + "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  s += "<text class=\"plot-title\" x=\"" + num(x0, 6) + "\" y=\"18\" font-size=\"13\" font-weight=\"bold\">" +
       html_escape(title_) + "</text>\n";
  // Axes with ticks (numeric) or category labels, and their titles.
  s += "<line x1=\"" + num(x0, 6) + "\" y1=\"" + num(y0, 6) + "\" x2=\"" + num(x1, 6) + "\" y2=\"" + num(y0, 6) +
       "\" stroke=\"#333\"/>\n<line x1=\"" + num(x0, 6) + "\" y1=\"" + num(y0, 6) + "\" x2=\"" + num(x0, 6) + "\" y2=\"" +
       num(y1, 6) + "\" stroke=\"#333\"/>\n";
  auto xt = x_.categories;
  if (xt.empty())
    for (double t : ticks(x_.lo, x_.hi)) xt.emplace_back(t, num(t));
  for (const auto& [v, label] : xt)
    s += "<line x1=\"" + num(px(v), 6) + "\" x2=\"" + num(px(v), 6) + "\" y1=\"" + num(y0, 6) + "\" y2=\"" +
         num(y0 + 4, 6) + "\" stroke=\"#333\"/><text class=\"tick x\" x=\"" + num(px(v), 6) + "\" y=\"" + num(y0 + 16, 6) +
         "\" text-anchor=\"middle\">" + html_escape(label) + "</text>\n";
  auto yt = y_.categories;
  if (yt.empty())
    for (double t : ticks(y_.lo, y_.hi)) yt.emplace_back(t, num(t));
  for (const auto& [v, label] : yt)
    s += "<line x1=\"" + num(x0 - 4, 6) + "\" x2=\"" + num(x1, 6) + "\" y1=\"" + num(py(v), 6) + "\" y2=\"" +
         num(py(v), 6) + "\" stroke=\"#ddd\"/><text class=\"tick y\" x=\"" + num(x0 - 6, 6) + "\" y=\"" +
         num(py(v) + 4, 6) + "\" text-anchor=\"end\">" + html_escape(label) + "</text>\n";
  s += "<text class=\"axis-title x\" x=\"" + num((x0 + x1) / 2, 6) + "\" y=\"" + std::to_string(h - 14) +
       "\" text-anchor=\"middle\">" + html_escape(x_.title) + "</text>\n";
  s += "<text class=\"axis-title y\" transform=\"translate(14," + num((y0 + y1) / 2, 6) +
       ") rotate(-90)\" text-anchor=\"middle\">" + html_escape(y_.title) + "</text>\n";
  s += body_;
  // Legend, right of the plot area.
  s += "<g class=\"legend\">\n";
  for (size_t i = 0; i < legend_.size(); ++i) {
    const double ly = y1 + 8 + 18 * static_cast<double>(i);
    s += "<g class=\"legend-entry\"><rect x=\"" + num(x1 + 12, 6) + "\" y=\"" + num(ly - 8, 6) +
         "\" width=\"12\" height=\"10\" fill=\"" + legend_[i].first + "\"/><text x=\"" + num(x1 + 30, 6) + "\" y=\"" +
         num(ly + 1, 6) + "\">" + html_escape(legend_[i].second) + "</text></g>\n";
  }
  s += "</g>\n</svg>\n";
  return s;
}

}  // namespace layoutx::cli
