// Ingest rate of a large qnn-profile-viewer CSV: 100,000 per-op rows (100 inferences x 1,000 ops,
// generated here), parsed alone and parsed + stored in a fresh SQLite database (WAL, one
// transaction). Reports rows/s as items_per_second; run with --benchmark_repetitions=N
// --benchmark_report_aggregates_only=true for medians.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <unistd.h>

#include "db/ingest.h"
#include "db/profile.h"
#include "db/schema.h"
#include "db/sha256.h"
#include "db/synthetic_profile.h"

namespace {

constexpr int kInferences = 100;
constexpr int kOpsPerInference = 1000;
constexpr int64_t kOpRows = int64_t{kInferences} * kOpsPerInference;  // 100,000

const std::string& profile_text() {
  static const std::string text = layoutx::db::synthetic_qnn_csv(kInferences, kOpsPerInference, 7);
  return text;
}

void BM_ParseQnnCsv(benchmark::State& state) {
  const std::string& text = profile_text();
  for (auto _ : state) {
    auto p = layoutx::db::parse_qnn_csv(text, "bench.csv");
    if (static_cast<int64_t>(p.ops.size()) != kOpRows) state.SkipWithError("wrong op count");
    benchmark::DoNotOptimize(p);
  }
  state.SetItemsProcessed(state.iterations() * kOpRows);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_ParseQnnCsv)->Unit(benchmark::kMillisecond);

// The whole ingest: hash, parse, and store in one transaction into a new database file.
void BM_IngestQnnCsv(benchmark::State& state) {
  const std::string& text = profile_text();
  const auto dir = std::filesystem::temp_directory_path() / ("layoutx_bench_" + std::to_string(getpid()));
  int n = 0;
  layoutx::db::IngestContext ctx;
  ctx.device = "bench-device";
  ctx.variant = "roll";
  ctx.layer = "sliding";
  ctx.ctx = 4096;
  for (auto _ : state) {
    state.PauseTiming();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    auto conn = layoutx::db::open_database((dir / ("b" + std::to_string(n++) + ".db")).string());
    state.ResumeTiming();
    auto r = layoutx::db::ingest_text(*conn, text, "bench.csv", ctx);
    if (static_cast<int64_t>(r.ops) != kOpRows) state.SkipWithError("wrong op count");
  }
  std::filesystem::remove_all(dir);
  state.SetItemsProcessed(state.iterations() * kOpRows);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_IngestQnnCsv)->Unit(benchmark::kMillisecond)->UseRealTime();  // rows/s by the wall clock

// The same into PostgreSQL (LAYOUTX_BENCH_PG: a libpq URI of an empty database; skipped when
// unset; tests/db/postgres_suite.sh with LAYOUTX_PG_BENCH sets it). Each iteration a new file
// content (seeded), so nothing is skipped as already ingested.
void BM_IngestQnnCsvPostgres(benchmark::State& state) {
  const char* uri = std::getenv("LAYOUTX_BENCH_PG");
  if (!uri || !*uri) {
    state.SkipWithError("LAYOUTX_BENCH_PG not set");
    return;
  }
  auto conn = layoutx::db::open_database(uri);
  layoutx::db::IngestContext ctx;
  ctx.device = "bench-device";
  ctx.variant = "roll";
  ctx.layer = "sliding";
  ctx.ctx = 4096;
  static uint32_t seed = 100;  // across repetitions too: a repeated content would be skipped
  for (auto _ : state) {
    state.PauseTiming();
    const std::string text = layoutx::db::synthetic_qnn_csv(kInferences, kOpsPerInference, seed++);
    state.ResumeTiming();
    auto r = layoutx::db::ingest_text(*conn, text, "bench.csv", ctx);
    if (static_cast<int64_t>(r.ops) != kOpRows) {
      state.SkipWithError("wrong op count");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * kOpRows);
}
BENCHMARK(BM_IngestQnnCsvPostgres)->Unit(benchmark::kMillisecond)->UseRealTime();  // the server works too: wall clock

void BM_Sha256(benchmark::State& state) {
  const std::string& text = profile_text();
  for (auto _ : state) benchmark::DoNotOptimize(layoutx::db::sha256_hex(text));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_Sha256)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
