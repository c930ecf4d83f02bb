#include "db/costmodel_records.h"

#include <fstream>
#include <set>
#include <sstream>

#include "db/sha256.h"

namespace layoutx::db {

std::vector<costmodel::MeasurementRecord> costmodel_records(Connection& c, const std::string& device,
                                                            const std::vector<std::string>& files_in_use) {
  // 1. Hashes of the files already in the fit.
  std::set<std::string> in_use;
  for (const auto& f : files_in_use) {
    std::ifstream in(f, std::ios::binary);
    if (!in) continue;
    std::stringstream ss;
    ss << in.rdbuf();
    in_use.insert(sha256_hex(ss.str()));
  }
  // 2. The device's layer timings at the calibrated boundaries.
  std::vector<costmodel::MeasurementRecord> out;
  auto q = c.prepare(
      "SELECT r.id, l.id, r.content_hash, r.source_path, m.name, l.layer_type, l.ctx, l.cache_entries, v.key, l.ms "
      "FROM layer_measurements l JOIN measurement_runs r ON r.id = l.run_id JOIN devices d ON d.id = l.device_id "
      "JOIN models m ON m.id = l.model_id JOIN variants v ON v.id = l.variant_id "
      "WHERE d.name = ?1 AND r.boundary IN ('ours', 'aihub_estimate') AND l.ms > 0 ORDER BY r.id, l.id");
  q.bind(1, device);
  while (q.step()) {
    if (in_use.count(q.text(2))) continue;
    costmodel::MeasurementRecord rec;
    rec.kind = costmodel::MeasurementRecord::Kind::kLayerTime;
    rec.id = "db:" + std::to_string(q.int64(0)) + "/" + std::to_string(q.int64(1));
    rec.source = c.path() + ": layer_measurements/" + std::to_string(q.int64(1)) + " (from " + q.text(3) + ")";
    rec.model = q.text(4);
    rec.layer = model::parse_layer_type(q.text(5));
    rec.context = static_cast<int>(q.int64(6));
    rec.cache_entries = q.is_null(7) ? 0 : static_cast<int>(q.int64(7));
    rec.variant = model::parse_variant(q.text(8));
    rec.ms = q.real(9);
    rec.sd = kDbTimingRelSd;
    out.push_back(std::move(rec));
  }
  return out;
}

}  // namespace layoutx::db
