#include "db/calibration_records.h"

#include <algorithm>

#include "db/ingest.h"
#include "support/clock.h"
#include "support/error.h"

namespace layoutx::db {

std::vector<LayerMeasurementRow> records_for_device(Connection& c, const std::string& device,
                                                    const std::vector<std::string>& boundaries) {
  std::vector<LayerMeasurementRow> out;
  auto q = c.prepare(
      "SELECT m.name, v.key, l.layer_type, l.ctx, l.cache_entries, l.precision, l.ms, l.samples, r.boundary, "
      "r.source_path FROM layer_measurements l JOIN measurement_runs r ON r.id = l.run_id "
      "JOIN devices d ON d.id = l.device_id JOIN models m ON m.id = l.model_id JOIN variants v ON v.id = l.variant_id "
      "WHERE d.name = ?1 ORDER BY r.id, l.id");
  q.bind(1, device);
  while (q.step()) {
    LayerMeasurementRow r;
    r.model = q.text(0);
    r.variant_key = q.text(1);
    r.layer_type = q.text(2);
    r.ctx = static_cast<int>(q.int64(3));
    if (auto ce = q.opt_int64(4)) r.cache_entries = static_cast<int>(*ce);
    r.precision = q.text(5);
    r.ms = q.real(6);
    r.samples = static_cast<int>(q.int64(7));
    r.boundary = q.text(8);
    r.source = q.text(9);
    if (!boundaries.empty() && std::find(boundaries.begin(), boundaries.end(), r.boundary) == boundaries.end()) continue;
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<OpShareRow> op_shares_for_device(Connection& c, const std::string& device) {
  std::vector<OpShareRow> out;
  auto q = c.prepare(
      "SELECT m.name, s.layer_type, s.selector, s.op, s.ctx, s.share_min, s.share_max FROM op_shares s "
      "JOIN measurement_runs r ON r.id = s.run_id JOIN devices d ON d.id = r.device_id JOIN models m ON m.id = s.model_id "
      "WHERE d.name = ?1 ORDER BY s.id");
  q.bind(1, device);
  while (q.step()) {
    OpShareRow r{q.text(0), q.text(1), q.text(2), q.text(3), std::nullopt, q.real(5), q.real(6)};
    if (auto x = q.opt_int64(4)) r.ctx = static_cast<int>(*x);
    out.push_back(std::move(r));
  }
  return out;
}

bool record_calibration(Connection& c, const std::string& id, const std::string& device,
                        const std::string& coefficients, const std::string& data_hash,
                        const std::string& provenance, std::optional<double> loo_error) {
  Transaction tx(c);
  auto seen = c.prepare("SELECT 1 FROM calibrations WHERE id = ?1");
  seen.bind(1, id);
  if (seen.step()) return false;
  c.prepare("INSERT INTO calibrations (id, device_id, created_at, coefficients, data_hash, provenance, loo_error) "
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
      .bind(1, id).bind(2, device_id(c, device)).bind(3, utc_now()).bind(4, coefficients).bind(5, data_hash)
      .bind(6, provenance).bind(7, loo_error).run();
  tx.commit();
  return true;
}

}  // namespace layoutx::db
