#include "db/report.h"

#include <functional>
#include <map>
#include <set>

#include "model/design_space.h"
#include "model/variant.h"
#include "support/error.h"

namespace layoutx::db {

std::vector<std::string> all_variant_keys(std::optional<model::LayerType> layer) {
  model::AxisScope scope;
  scope.layer_type = layer;
  std::set<std::string> keys;
  for (const auto& p : model::axis_values("precision"))
    for (const auto& v : model::design_space().variants(model::parse_variant("roll", {"precision=" + p}), &scope))
      keys.insert(v.key());
  return {keys.begin(), keys.end()};
}

std::vector<DeviceModelReport> report(Connection& c, const std::string& device, const std::string& model) {
  std::vector<DeviceModelReport> out;
  const std::map<std::string, std::vector<std::string>> space{
      {"sliding", all_variant_keys(model::LayerType::kSliding)}, {"full", all_variant_keys(model::LayerType::kFull)}};
  // 1. The (device, model) pairs with layer measurements or runs.
  auto pairs = c.prepare(
      "SELECT DISTINCT d.id, d.name, m.id, m.name FROM layer_measurements l JOIN devices d ON d.id = l.device_id "
      "JOIN models m ON m.id = l.model_id WHERE (?1 = '' OR d.name = ?1) AND (?2 = '' OR m.name = ?2) "
      "ORDER BY d.name, m.name");
  pairs.bind(1, device).bind(2, model);
  while (pairs.step()) {
    DeviceModelReport r;
    int64_t dev = pairs.int64(0), mod = pairs.int64(2);
    r.device = pairs.text(1);
    r.model = pairs.text(3);
    // 2. Counts.
    auto count = [&](const std::string& sql) {
      auto s = c.prepare(sql);
      s.bind(1, dev).bind(2, mod);
      s.step();
      return static_cast<int>(s.int64(0));
    };
    r.runs = count("SELECT count(DISTINCT run_id) FROM layer_measurements WHERE device_id = ?1 AND model_id = ?2");
    r.layer_measurements = count("SELECT count(*) FROM layer_measurements WHERE device_id = ?1 AND model_id = ?2");
    r.op_measurements = count(
        "SELECT count(*) FROM op_measurements o JOIN layer_measurements l ON l.id = o.layer_measurement_id "
        "WHERE l.device_id = ?1 AND l.model_id = ?2");
    r.op_shares = count(
        "SELECT count(*) FROM op_shares s JOIN measurement_runs r ON r.id = s.run_id WHERE r.device_id = ?1 AND s.model_id = ?2");
    r.compile_outcomes = count(
        "SELECT count(*) FROM compile_outcomes WHERE device_id = ?1 AND run_id IN (SELECT run_id FROM layer_measurements "
        "WHERE device_id = ?1 AND model_id = ?2 UNION SELECT run_id FROM op_shares WHERE model_id = ?2)");
    r.variants_measured = count(
        "SELECT count(DISTINCT variant_id) FROM layer_measurements WHERE device_id = ?1 AND model_id = ?2");
    // 3. Coverage: measured (variant key, layer type) pairs against the space and the presets.
    std::map<std::pair<std::string, std::string>, int> measured;
    auto m = c.prepare(
        "SELECT v.key, l.layer_type, count(*) FROM layer_measurements l JOIN variants v ON v.id = l.variant_id "
        "WHERE l.device_id = ?1 AND l.model_id = ?2 GROUP BY v.key, l.layer_type");
    m.bind(1, dev).bind(2, mod);
    while (m.step()) measured[{m.text(0), m.text(1)}] = static_cast<int>(m.int64(2));
    for (const char* layer : {"sliding", "full"}) {
      for (const auto& key : space.at(layer)) {
        ++r.space_size;
        if (measured.count({key, layer})) ++r.space_measured;
      }
      for (const auto& preset : model::preset_names())
        for (const auto& p : model::axis_values("precision")) {
          CoverageCell cell{layer, preset, p, 0};
          auto it = measured.find({model::parse_variant(preset, {"precision=" + p}).key(), layer});
          if (it != measured.end()) cell.measurements = it->second;
          r.presets.push_back(cell);
        }
    }
    // 4. Calibration error over time: each stored prediction against the latest measurement of
    //    its key (same device, model, variant, layer, ctx), grouped by the calibration that made it.
    auto e = c.prepare(
        "SELECT p.calibration_id, min(p.made_at), count(*), "
        "  avg(abs(p.ms - (SELECT l.ms FROM layer_measurements l WHERE l.device_id = p.device_id AND "
        "    l.model_id = p.model_id AND l.variant_id = p.variant_id AND l.layer_type = p.layer_type AND l.ctx = p.ctx "
        "    ORDER BY l.run_id DESC, l.id DESC LIMIT 1)) / "
        "    (SELECT l.ms FROM layer_measurements l WHERE l.device_id = p.device_id AND "
        "    l.model_id = p.model_id AND l.variant_id = p.variant_id AND l.layer_type = p.layer_type AND l.ctx = p.ctx "
        "    ORDER BY l.run_id DESC, l.id DESC LIMIT 1)), "
        "  (SELECT k.loo_error FROM calibrations k WHERE k.id = p.calibration_id) "
        "FROM predictions p WHERE p.device_id = ?1 AND p.model_id = ?2 AND EXISTS (SELECT 1 FROM layer_measurements l "
        "  WHERE l.device_id = p.device_id AND l.model_id = p.model_id AND l.variant_id = p.variant_id AND "
        "  l.layer_type = p.layer_type AND l.ctx = p.ctx AND l.ms > 0) "
        "GROUP BY p.calibration_id ORDER BY min(p.made_at), p.calibration_id");
    e.bind(1, dev).bind(2, mod);
    while (e.step())
      r.calibration.push_back({e.text(0), e.text(1), static_cast<int>(e.int64(2)), e.real(3), e.opt_real(4)});
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace layoutx::db
