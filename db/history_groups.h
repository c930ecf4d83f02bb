// A key's measurement history shrunk for a plot: at most `max_groups` groups of consecutive
// measurements (ingest order), each summarized by its quantiles, so a plot of any history draws
// a bounded number of shapes (report --html; a million measurements of one key are as many
// groups as a few hundred).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace layoutx::db {

struct HistoryGroup {
  size_t first = 0, last = 0;  // measurement indices (0-based, inclusive)
  size_t count = 0;
  double median_ms = 0, p10_ms = 0, p90_ms = 0, min_ms = 0, max_ms = 0;
  std::string first_at, last_at;  // ingest times of the first and last (ISO-8601 UTC)
  size_t regressions = 0;         // measurements flagged by `regressed`
};

// Groups of equal size (the last may be smaller), one per measurement when there are at most
// max_groups (max_groups >= 1). Quantiles: the value at rank round(q (count - 1)) of the sorted
// group. `at` may be shorter than `ms` (missing times are "?"); `regressed[i]` marks measurement
// i (may be empty).
std::vector<HistoryGroup> group_history(const std::vector<double>& ms, const std::vector<std::string>& at,
                                        const std::vector<bool>& regressed, size_t max_groups);

}  // namespace layoutx::db
