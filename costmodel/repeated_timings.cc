#include "costmodel/repeated_timings.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

namespace layoutx::costmodel {

std::vector<MeasurementRecord> combine_repeated_timings(const std::vector<MeasurementRecord>& records,
                                                        const std::vector<RepeatedTiming>& repeated) {
  using Kind = MeasurementRecord::Kind;
  // 1. Every record in order; the timings of one graph share the slot of its first timing.
  std::vector<MeasurementRecord> out;
  std::map<std::string, size_t> slot;  // graph key -> index into `pooled`
  std::vector<RepeatedTiming> pooled;
  std::vector<size_t> pooled_at;       // its position in `out`
  std::vector<double> max_sd;          // the largest stated sd of its members
  auto add = [&](const RepeatedTiming& g) {
    if (g.count < 1) return;
    auto [it, fresh] = slot.try_emplace(graph_key(g.record), pooled.size());
    if (fresh) {
      pooled.push_back(g);
      pooled_at.push_back(out.size());
      max_sd.push_back(g.record.sd);
      out.push_back(g.record);
      return;
    }
    // 2. Pool with what the graph has (Chan et al.'s pairwise update of count, mean and M2).
    RepeatedTiming& p = pooled[it->second];
    const double n_a = p.count, n_b = g.count, n = n_a + n_b;
    const double delta = g.record.ms - p.record.ms;
    p.record.ms += delta * n_b / n;
    p.sum_sq_dev_ms2 += g.sum_sq_dev_ms2 + delta * delta * n_a * n_b / n;
    p.count += g.count;
    max_sd[it->second] = std::max(max_sd[it->second], g.record.sd);
  };
  for (const auto& r : records) {
    if (r.kind == Kind::kLayerTime) add({r, 1, 0.0});
    else out.push_back(r);
  }
  for (const auto& g : repeated) add(g);
  // 3. One record per graph: the mean, the larger of the stated sd and the observed spread.
  for (size_t i = 0; i < pooled.size(); ++i) {
    MeasurementRecord r = pooled[i].record;
    const int n = pooled[i].count;
    if (n > 1) {
      const double spread_rel = std::sqrt(pooled[i].sum_sq_dev_ms2 / (n - 1)) / r.ms;
      r.sd = std::max(max_sd[i], spread_rel);
      r.id += " (mean of " + std::to_string(n) + ")";
      r.source += " and " + std::to_string(n - 1) + " repeats of the same graph";
    }
    out[pooled_at[i]] = std::move(r);
  }
  return out;
}

}  // namespace layoutx::costmodel
