#include "db/history_groups.h"

#include <algorithm>
#include <cmath>

namespace layoutx::db {

std::vector<HistoryGroup> group_history(const std::vector<double>& ms, const std::vector<std::string>& at,
                                        const std::vector<bool>& regressed, size_t max_groups) {
  std::vector<HistoryGroup> groups;
  const size_t n = ms.size();
  if (n == 0) return groups;
  max_groups = std::max<size_t>(1, max_groups);
  const size_t size = (n + max_groups - 1) / max_groups;  // measurements per group
  std::vector<double> sorted;
  auto time_of = [&](size_t i) { return i < at.size() ? at[i] : std::string("?"); };
  for (size_t first = 0; first < n; first += size) {
    HistoryGroup g;
    g.first = first;
    g.last = std::min(n, first + size) - 1;
    g.count = g.last - g.first + 1;
    sorted.assign(ms.begin() + static_cast<std::ptrdiff_t>(g.first), ms.begin() + static_cast<std::ptrdiff_t>(g.last) + 1);
    std::sort(sorted.begin(), sorted.end());
    auto rank = [&](double q) { return sorted[static_cast<size_t>(std::lround(q * static_cast<double>(g.count - 1)))]; };
    g.median_ms = rank(0.5);
    g.p10_ms = rank(0.1);
    g.p90_ms = rank(0.9);
    g.min_ms = sorted.front();
    g.max_ms = sorted.back();
    g.first_at = time_of(g.first);
    g.last_at = time_of(g.last);
    for (size_t i = g.first; i <= g.last; ++i) g.regressions += i < regressed.size() && regressed[i];
    groups.push_back(std::move(g));
  }
  return groups;
}

}  // namespace layoutx::db
