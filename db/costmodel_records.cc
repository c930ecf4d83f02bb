#include "db/costmodel_records.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "db/sha256.h"

namespace layoutx::db {

namespace {

// The WHERE clause both queries share: the device (?1), the calibrated boundaries, and no run
// whose content is a file already in the fit. Binds them on `q` from ?1 on.
struct RunFilter {
  std::string device;
  std::vector<std::string> boundaries;
  std::set<std::string> hashes_in_use;

  RunFilter(const std::string& d, const std::vector<std::string>& b, const std::vector<std::string>& files)
      : device(d), boundaries(b) {
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      if (!in) continue;
      std::stringstream ss;
      ss << in.rdbuf();
      hashes_in_use.insert(sha256_hex(ss.str()));
    }
  }
  // "d.name = ?1 AND r.boundary IN (?2, ...) [AND r.content_hash NOT IN (...)]" over aliases d, r.
  std::string sql() const {
    std::string in_boundaries, not_in;
    int next = 2;
    for (size_t i = 0; i < boundaries.size(); ++i) in_boundaries += (i ? ", ?" : "?") + std::to_string(next++);
    for (size_t i = 0; i < hashes_in_use.size(); ++i) not_in += (i ? ", ?" : "?") + std::to_string(next++);
    return "d.name = ?1 AND r.boundary IN (" + in_boundaries + ")" +
           (hashes_in_use.empty() ? std::string() : " AND r.content_hash NOT IN (" + not_in + ")");
  }
  void bind(Statement& q) const {
    q.bind(1, device);
    int i = 2;
    for (const auto& b : boundaries) q.bind(i++, b);
    for (const auto& h : hashes_in_use) q.bind(i++, h);
  }
};

// The joins from a layer measurement `l` to its run `r`, device `d`, model `m` and variant `v`.
constexpr const char* kGraphJoins =
    "JOIN measurement_runs r ON r.id = l.run_id JOIN devices d ON d.id = l.device_id "
    "JOIN models m ON m.id = l.model_id JOIN variants v ON v.id = l.variant_id ";

// Model, layer type, ctx, cache entries and variant key from columns [at, at + 5).
void read_graph(Statement& q, int at, costmodel::MeasurementRecord& rec) {
  rec.model = q.text(at);
  rec.layer = model::parse_layer_type(q.text(at + 1));
  rec.context = static_cast<int>(q.int64(at + 2));
  rec.cache_entries = q.is_null(at + 3) ? 0 : static_cast<int>(q.int64(at + 3));
  rec.variant = model::parse_variant(q.text(at + 4));
}

std::vector<costmodel::RepeatedTiming> timings_where(Connection& c, const RunFilter& filter) {
  // Per graph: count, mean and sum of squares of the device's timings at the calibrated
  // boundaries, in one pass over the rows (linear in rows; the fit then sees one row a graph).
  auto q = c.prepare(
      std::string("SELECT min(l.id), m.name, l.layer_type, l.ctx, l.cache_entries, v.key, count(*), avg(l.ms), sum(l.ms * l.ms) "
                  "FROM layer_measurements l ") + kGraphJoins + "WHERE " + filter.sql() + " AND l.ms > 0 GROUP BY m.name, l.layer_type, l.ctx, l.cache_entries, v.key ORDER BY min(l.id)");
  filter.bind(q);
  std::vector<costmodel::RepeatedTiming> out;
  while (q.step()) {
    costmodel::RepeatedTiming t;
    costmodel::MeasurementRecord& rec = t.record;
    t.count = static_cast<int>(q.int64(6));
    rec.kind = costmodel::MeasurementRecord::Kind::kLayerTime;
    rec.id = "db:" + std::to_string(q.int64(0));
    rec.source = c.path() + ": layer_measurements/" + std::to_string(q.int64(0)) +
                 (t.count > 1 ? " and " + std::to_string(t.count - 1) + " more of the same graph" : "");
    read_graph(q, 1, rec);
    rec.ms = q.real(7);
    rec.sd = kDbTimingRelSd;
    // M2 = sum(x^2) - n * mean^2 (>= 0 up to rounding).
    t.sum_sq_dev_ms2 = std::max(0.0, q.real(8) - t.count * rec.ms * rec.ms);
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<costmodel::MeasurementRecord> op_shares_where(Connection& c, const RunFilter& filter,
                                                           std::vector<std::string>* unmatched) {
  // One row per (run, op name): the op's time summed over the run's inferences (a share is a
  // ratio within the run, so sums serve as well as means).
  auto q = c.prepare(
      std::string("SELECT o.run_id, m.name, l.layer_type, l.ctx, l.cache_entries, v.key, o.op_name, sum(o.ms) "
                  "FROM op_measurements o JOIN layer_measurements l ON l.id = o.layer_measurement_id ") +
      kGraphJoins + "WHERE " + filter.sql() + " AND o.ms IS NOT NULL AND l.ms > 0 "
      "GROUP BY o.run_id, m.name, l.layer_type, l.ctx, l.cache_entries, v.key, o.op_name ORDER BY o.run_id, min(o.id)");
  filter.bind(q);
  std::vector<costmodel::MeasurementRecord> out;
  costmodel::MeasurementRecord graph;
  std::vector<costmodel::ProfiledOp> rows;
  int64_t run = -1;
  auto flush = [&] {
    if (run < 0) return;
    const std::string id = "db-op:" + std::to_string(run);
    auto s = costmodel::shares_from_op_profile(graph, rows, id, c.path() + ": op_measurements of run " + std::to_string(run),
                                                costmodel::kOpProfileShareSd);
    out.insert(out.end(), s.shares.begin(), s.shares.end());
    if (unmatched)
      for (const auto& n : s.unmatched) unmatched->push_back("run " + std::to_string(run) + ": " + n);
    rows.clear();
  };
  while (q.step()) {
    if (q.int64(0) != run) {
      flush();
      run = q.int64(0);
      graph = {};
      read_graph(q, 1, graph);
    }
    rows.push_back({q.text(6), q.real(7)});
  }
  flush();
  return out;
}

}  // namespace

std::vector<costmodel::RepeatedTiming> costmodel_timings(Connection& c, const std::string& device,
                                                         const std::vector<std::string>& boundaries,
                                                         const std::vector<std::string>& files_in_use) {
  if (boundaries.empty()) return {};
  return timings_where(c, RunFilter(device, boundaries, files_in_use));
}

std::vector<costmodel::MeasurementRecord> costmodel_op_shares(Connection& c, const std::string& device,
                                                               const std::vector<std::string>& boundaries,
                                                               const std::vector<std::string>& files_in_use,
                                                               std::vector<std::string>* unmatched) {
  if (boundaries.empty()) return {};
  return op_shares_where(c, RunFilter(device, boundaries, files_in_use), unmatched);
}

std::vector<costmodel::MeasurementRecord> with_database_records(Connection& c, const std::string& device,
                                                                const std::vector<std::string>& boundaries,
                                                                const std::vector<std::string>& files_in_use,
                                                                const std::vector<costmodel::MeasurementRecord>& records,
                                                                std::vector<std::string>* unmatched) {
  if (boundaries.empty()) return costmodel::combine_repeated_timings(records, {});
  const RunFilter filter(device, boundaries, files_in_use);  // the files read and hashed once
  std::vector<costmodel::MeasurementRecord> out = costmodel::combine_repeated_timings(records, timings_where(c, filter));
  const auto shares = op_shares_where(c, filter, unmatched);
  out.insert(out.end(), shares.begin(), shares.end());
  return out;
}

}  // namespace layoutx::db
