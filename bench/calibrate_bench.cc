// Fit time of `calibrate --db` against the database's size: the shipped measurements' timed
// graphs measured again and again (1.6M layer rows by default, spread +-2%), aggregated in SQL
// (one row per graph), combined with the shipped file and fitted with leave-one-out. The cost
// is linear in rows (one GROUP BY pass); the target is < 10 s at 1.6M rows. Run with
// --benchmark_repetitions=3 --benchmark_report_aggregates_only=true for medians.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <unistd.h>

#include "costmodel/calibration.h"
#include "costmodel/device_spec.h"
#include "costmodel/op_level_predictor.h"
#include "costmodel/repeated_timings.h"
#include "db/costmodel_records.h"
#include "db/ingest.h"
#include "db/schema.h"
#include "support/paths.h"

namespace {

namespace db = layoutx::db;
namespace cm = layoutx::costmodel;

// A database with `rows` layer timings over the shipped file's timed graphs (one run).
std::string build_database(int64_t rows, const std::vector<cm::MeasurementRecord>& shipped) {
  const auto dir = std::filesystem::temp_directory_path() / ("layoutx_calibrate_bench_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / ("rows" + std::to_string(rows) + ".db")).string();
  auto c = db::open_database(path);
  db::Transaction tx(*c);
  const int64_t dev = db::device_id(*c, "galaxy-s25");
  c->prepare("INSERT INTO measurement_runs (source_path, content_hash, format, tool, device_id, ingested_at, boundary) "
             "VALUES ('bench', 'bench', 'csv', 'bench', ?1, '2026-01-01T00:00:00Z', 'ours')").bind(1, dev).run();
  const int64_t run = c->last_insert_id();
  std::vector<const cm::MeasurementRecord*> timed;
  std::vector<int64_t> model_ids, variant_ids;
  for (const auto& r : shipped)
    if (r.kind == cm::MeasurementRecord::Kind::kLayerTime) {
      timed.push_back(&r);
      model_ids.push_back(db::model_id(*c, r.model));
      variant_ids.push_back(db::variant_id(*c, r.variant.key()));
    }
  auto ins = c->prepare(
      "INSERT INTO layer_measurements (run_id, device_id, model_id, variant_id, layer_type, ctx, cache_entries, precision, ms) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  for (int64_t i = 0; i < rows; ++i) {
    const size_t g = static_cast<size_t>(i) % timed.size();
    const cm::MeasurementRecord& r = *timed[g];
    const double u = static_cast<double>((i * 7919) % 1001) / 500.0 - 1.0;  // deterministic in [-1, 1]
    ins.bind(1, run).bind(2, dev).bind(3, model_ids[g]).bind(4, variant_ids[g])
        .bind(5, layoutx::model::to_string(r.layer)).bind(6, r.context)
        .bind(7, r.cache_entries > 0 ? std::optional<int64_t>(r.cache_entries) : std::nullopt)
        .bind(8, layoutx::model::to_string(r.variant.precision())).bind(9, r.ms * (1.0 + 0.02 * u));
    ins.run();
  }
  tx.commit();
  return path;
}

void BM_CalibrateFromDatabase(benchmark::State& state) {
  const int64_t rows = state.range(0);
  const cm::DeviceSpec dev = cm::load_device_named(cm::kDefaultDevice);
  const std::string data = cm::device_file(dev.calibration.measurements);
  const auto shipped = cm::load_measurements(data);
  const std::string path = build_database(rows, shipped);
  auto conn = db::open_existing_database(path);
  size_t records = 0;
  for (auto _ : state) {
    // What `calibrate --db` does after reading its files: aggregate, combine, check, fit.
    auto timings = db::costmodel_timings(*conn, dev.name, dev.boundaries, {data});
    auto combined = cm::combine_repeated_timings(shipped, timings);
    cm::check_against_graphs(combined);
    auto rep = cm::calibrate(combined, dev);
    records = combined.size();
    benchmark::DoNotOptimize(rep);
  }
  state.counters["db_rows"] = static_cast<double>(rows);
  state.counters["fit_records"] = static_cast<double>(records);
  state.SetItemsProcessed(state.iterations() * rows);
  conn.reset();
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}
BENCHMARK(BM_CalibrateFromDatabase)->Arg(16000)->Arg(160000)->Arg(1600000)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
