#include "db/costmodel_records.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "db/sha256.h"

namespace layoutx::db {

std::vector<costmodel::RepeatedTiming> costmodel_timings(Connection& c, const std::string& device,
                                                         const std::vector<std::string>& boundaries,
                                                         const std::vector<std::string>& files_in_use) {
  if (boundaries.empty()) return {};
  // 1. Hashes of the files already in the fit.
  std::set<std::string> in_use;
  for (const auto& f : files_in_use) {
    std::ifstream in(f, std::ios::binary);
    if (!in) continue;
    std::stringstream ss;
    ss << in.rdbuf();
    in_use.insert(sha256_hex(ss.str()));
  }
  // Placeholders: ?1 the device, then the boundaries, then the hashes in use.
  std::string in_boundaries, not_in;
  int next = 2;
  for (size_t i = 0; i < boundaries.size(); ++i) in_boundaries += (i ? ", ?" : "?") + std::to_string(next++);
  for (size_t i = 0; i < in_use.size(); ++i) not_in += (i ? ", ?" : "?") + std::to_string(next++);
  // 2. Per graph: count, mean and sum of squares of the device's timings at the calibrated
  //    boundaries, in one pass over the rows (linear in rows; the fit then sees one row a graph).
  auto q = c.prepare(
      "SELECT min(l.id), m.name, l.layer_type, l.ctx, l.cache_entries, v.key, count(*), avg(l.ms), sum(l.ms * l.ms) "
      "FROM layer_measurements l JOIN measurement_runs r ON r.id = l.run_id JOIN devices d ON d.id = l.device_id "
      "JOIN models m ON m.id = l.model_id JOIN variants v ON v.id = l.variant_id "
      "WHERE d.name = ?1 AND r.boundary IN (" + in_boundaries + ") AND l.ms > 0" +
      (in_use.empty() ? std::string() : " AND r.content_hash NOT IN (" + not_in + ")") +
      " GROUP BY m.name, l.layer_type, l.ctx, l.cache_entries, v.key ORDER BY min(l.id)");
  q.bind(1, device);
  int i = 2;
  for (const auto& b : boundaries) q.bind(i++, b);
  for (const auto& h : in_use) q.bind(i++, h);
  std::vector<costmodel::RepeatedTiming> out;
  while (q.step()) {
    costmodel::RepeatedTiming t;
    costmodel::MeasurementRecord& rec = t.record;
    t.count = static_cast<int>(q.int64(6));
    rec.kind = costmodel::MeasurementRecord::Kind::kLayerTime;
    rec.id = "db:" + std::to_string(q.int64(0));
    rec.source = c.path() + ": layer_measurements/" + std::to_string(q.int64(0)) +
                 (t.count > 1 ? " and " + std::to_string(t.count - 1) + " more of the same graph" : "");
    rec.model = q.text(1);
    rec.layer = model::parse_layer_type(q.text(2));
    rec.context = static_cast<int>(q.int64(3));
    rec.cache_entries = q.is_null(4) ? 0 : static_cast<int>(q.int64(4));
    rec.variant = model::parse_variant(q.text(5));
    rec.ms = q.real(7);
    rec.sd = kDbTimingRelSd;
    // M2 = sum(x^2) - n * mean^2 (>= 0 up to rounding).
    t.sum_sq_dev_ms2 = std::max(0.0, q.real(8) - t.count * rec.ms * rec.ms);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace layoutx::db
