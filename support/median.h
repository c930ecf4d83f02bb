// The median of a sample (0 for none): the middle value, or the mean of the two middle ones.
#pragma once
#include <algorithm>
#include <cstddef>
#include <vector>

namespace layoutx {

inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  const size_t n = v.size();
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2), v.end());
  const double hi = v[n / 2];
  if (n % 2) return hi;
  const double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2));
  return (lo + hi) / 2.0;
}

}  // namespace layoutx
