#include "db/regress.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "db/ingest.h"
#include "support/clock.h"
#include "support/error.h"

namespace layoutx::db {

RegressResult regress(Connection& c, const RegressOptions& opt, const PredictFn& predict) {
  RegressResult out;
  // 1. Every layer measurement, grouped by key, in ingest order.
  auto q = c.prepare(
      "SELECT d.name, m.name, v.key, l.layer_type, l.ctx, r.boundary, l.ms, r.ingested_at FROM layer_measurements l "
      "JOIN measurement_runs r ON r.id = l.run_id JOIN devices d ON d.id = l.device_id "
      "JOIN models m ON m.id = l.model_id JOIN variants v ON v.id = l.variant_id "
      "WHERE (?1 = '' OR d.name = ?1) AND (?2 = '' OR m.name = ?2) ORDER BY d.name, m.name, v.key, l.layer_type, l.ctx, r.boundary, r.id, l.id");
  q.bind(1, opt.device).bind(2, opt.model);
  std::map<std::tuple<std::string, std::string, std::string, std::string, int, std::string>, RegressRow> rows;
  std::vector<std::tuple<std::string, std::string, std::string, std::string, int, std::string>> order;
  while (q.step()) {
    auto k = std::make_tuple(q.text(0), q.text(1), q.text(2), q.text(3), static_cast<int>(q.int64(4)), q.text(5));
    auto [it, fresh] = rows.try_emplace(k);
    if (fresh) {
      it->second.key = {q.text(0), q.text(1), q.text(2), q.text(3), static_cast<int>(q.int64(4)), q.text(5)};
      order.push_back(k);
    }
    it->second.history_ms.push_back(q.real(6));
    it->second.history_at.push_back(q.text(7));
  }
  // 2. Per key: against the previous measurement, then against the prediction.
  for (const auto& k : order) {
    RegressRow& r = rows[k];
    r.latest_ms = r.history_ms.back();
    if (r.history_ms.size() >= 2) {
      r.previous_ms = r.history_ms[r.history_ms.size() - 2];
      if (*r.previous_ms > 0) {
        r.change = (r.latest_ms - *r.previous_ms) / *r.previous_ms;
        r.slower_than_previous = *r.change > opt.tolerance;
      }
    }
    if (opt.predicts && !opt.predicts(r.key)) {
      r.prediction_status = "not predicted (boundary " + r.key.boundary + ")";
      out.any_regression = out.any_regression || r.slower_than_previous;
      r.regression = r.slower_than_previous;
      out.rows.push_back(r);
      continue;
    }
    try {
      r.predicted = predict(r.key);
      if (!r.predicted) r.prediction_status = "no predictor";
      else if (r.latest_ms > r.predicted->high_ms) r.prediction_status = "slower than predicted";
      else if (r.latest_ms < r.predicted->low_ms) r.prediction_status = "faster than predicted";
      else r.prediction_status = "within interval";
    } catch (const Error& e) {
      r.prediction_status = std::string("prediction failed: ") + e.what();
      r.prediction_failed = true;
      ++out.prediction_failures;
    }
    r.regression = r.slower_than_previous || r.prediction_status == "slower than predicted";
    out.any_regression = out.any_regression || r.regression;
    out.rows.push_back(r);
  }
  // 3. Keep the predictions made, each once per (key, calibration), with the calibration's id.
  if (opt.record_predictions) {
    Transaction tx(c);
    for (const auto& r : out.rows) {
      if (!r.predicted) continue;
      int64_t dev = device_id(c, r.key.device), mod = model_id(c, r.key.model), var = variant_id(c, r.key.variant_key);
      auto seen = c.prepare(
          "SELECT 1 FROM predictions WHERE device_id = ?1 AND model_id = ?2 AND variant_id = ?3 AND layer_type = ?4 "
          "AND ctx = ?5 AND calibration_id = ?6 AND ms = ?7");
      seen.bind(1, dev).bind(2, mod).bind(3, var).bind(4, r.key.layer_type).bind(5, r.key.ctx)
          .bind(6, r.predicted->calibration_id).bind(7, r.predicted->ms);
      if (seen.step()) continue;
      c.prepare("INSERT INTO predictions (device_id, model_id, variant_id, layer_type, ctx, ms, low_ms, high_ms, "
                "calibration_id, made_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)")
          .bind(1, dev).bind(2, mod).bind(3, var).bind(4, r.key.layer_type).bind(5, r.key.ctx)
          .bind(6, r.predicted->ms).bind(7, r.predicted->low_ms).bind(8, r.predicted->high_ms)
          .bind(9, r.predicted->calibration_id).bind(10, utc_now()).run();
    }
    tx.commit();
  }
  return out;
}

}  // namespace layoutx::db
