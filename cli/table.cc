#include "cli/table.h"

#include <cctype>
#include <cstdio>

namespace layoutx::cli {

namespace {
bool numeric(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == ',' || c == '-' || c == '+' || c == '%' ||
          c == 'e'))
      return false;
  return std::isdigit(static_cast<unsigned char>(s.back())) || s.back() == '%';
}
}  // namespace

void Table::print(std::ostream& out) const {
  std::vector<size_t> w(header_.size(), 0);
  for (size_t i = 0; i < header_.size(); ++i) w[i] = header_[i].size();
  for (const auto& r : rows_)
    for (size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], r[i].size());
  auto line = [&](const std::vector<std::string>& r, bool head) {
    for (size_t i = 0; i < w.size(); ++i) {
      std::string c = i < r.size() ? r[i] : "";
      std::string pad(w[i] - c.size(), ' ');
      bool right = !head && numeric(c);
      out << (i ? "  " : "") << (right ? pad + c : (i + 1 == w.size() ? c : c + pad));
    }
    out << '\n';
  };
  line(header_, true);
  std::vector<std::string> rule;
  for (auto x : w) rule.push_back(std::string(x, '-'));
  line(rule, true);
  for (const auto& r : rows_) line(r, false);
}

std::string fmt(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string fmt_int(long long v) {
  std::string s = std::to_string(v < 0 ? -v : v);
  std::string r;
  int n = 0;
  for (auto it = s.rbegin(); it != s.rend(); ++it) {
    if (n && n % 3 == 0) r.insert(r.begin(), ',');
    r.insert(r.begin(), *it);
    ++n;
  }
  return v < 0 ? "-" + r : r;
}

}  // namespace layoutx::cli
