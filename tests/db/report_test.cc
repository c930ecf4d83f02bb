#include "db/report.h"

#include <gtest/gtest.h>

#include "db/calibration_records.h"
#include "db/ingest.h"
#include "db/regress.h"
#include "db/schema.h"
#include "model/design_space.h"
#include "model/variant.h"
#include "tests/db/db_test_util.h"

namespace layoutx::db {
namespace {

TEST(Report, SpaceIsEveryExploredVariantPerLayerType) {
  // Per precision, the enumerator's count (tests/model/design_space_test.cc: 2880 at w4a16, a
  // quarter at fp16 and w8a16, where weight_quant does not apply): a sliding layer's keys
  // 2880 + 720 + 720; a full layer's half of them (no sliding_cache axis).
  const auto sliding = all_variant_keys(model::LayerType::kSliding), full = all_variant_keys(model::LayerType::kFull);
  size_t per_precision = 0;
  for (const auto& p : model::axis_values("precision"))
    per_precision += model::design_space().variants(model::parse_variant("roll", {"precision=" + p})).size();
  EXPECT_EQ(sliding.size(), per_precision);
  EXPECT_EQ(sliding.size(), 2880u + 720u + 720u);
  EXPECT_EQ(full.size(), sliding.size() / 2);
  for (const auto& k : full) EXPECT_EQ(k.find("sliding_cache"), std::string::npos) << k;
  EXPECT_EQ(all_variant_keys().size(), sliding.size());
}

TEST(Report, CountsCoverageAndCalibrationError) {
  auto c = open_database(test::temp_path("x.db"));
  IngestContext ctx;
  ctx.device = "galaxy-s25";
  ingest_file(*c, test::fixture("ours_roll.csv"), ctx);  // roll sliding, ring full, score-join sliding (fp16)
  ingest_file(*c, test::fixture("ours_roll_later.csv"), ctx);
  EXPECT_TRUE(record_calibration(*c, "cal-a", "galaxy-s25", "{}", "h", "test", 0.05));
  EXPECT_FALSE(record_calibration(*c, "cal-a", "galaxy-s25", "{}", "h", "test", 0.05));
  // Predictions 10% above every measurement of calibration cal-a, recorded.
  RegressOptions record;
  record.record_predictions = true;
  regress(*c, record, [&](const MeasurementKey& k) -> std::optional<PredictedLatency> {
    auto rows = records_for_device(*c, k.device);
    double latest = 0;
    for (const auto& r : rows)
      if (r.variant_key == k.variant_key && r.layer_type == k.layer_type) latest = r.ms;
    return PredictedLatency{latest * 1.1, latest, latest * 1.2, "cal-a"};
  });
  auto rep = report(*c);
  ASSERT_EQ(rep.size(), 1u);
  const auto& r = rep[0];
  EXPECT_EQ(r.device, "galaxy-s25");
  EXPECT_EQ(r.model, "spark-x2.5-1.7b");
  EXPECT_EQ(r.runs, 2);
  EXPECT_EQ(r.layer_measurements, 5);
  EXPECT_EQ(r.variants_measured, 3);
  EXPECT_EQ(r.space_size, static_cast<int>(all_variant_keys(model::LayerType::kSliding).size() +
                                             all_variant_keys(model::LayerType::kFull).size()));
  EXPECT_EQ(r.space_measured, 3);
  EXPECT_EQ(r.presets.size(), 2u * 3 * 3);
  int measured_cells = 0;
  for (const auto& cell : r.presets) measured_cells += cell.measurements > 0;
  EXPECT_EQ(measured_cells, 3);
  ASSERT_EQ(r.calibration.size(), 1u);
  EXPECT_EQ(r.calibration[0].calibration_id, "cal-a");
  EXPECT_EQ(r.calibration[0].predictions, 3);
  EXPECT_NEAR(r.calibration[0].mean_abs_rel_error, 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(*r.calibration[0].loo_error, 0.05);
}

TEST(CalibrationRecords, FiltersBoundaries) {
  auto c = open_database(test::temp_path("x.db"));
  IngestContext ctx;
  ctx.device = "galaxy-s25";
  ingest_file(*c, test::fixture("ours_roll.csv"), ctx);
  ctx.variant = "roll";
  ctx.layer = "sliding";
  ctx.ctx = 4096;
  ingest_file(*c, test::fixture("ort_roll_sliding_fp16.json"), ctx);
  EXPECT_EQ(records_for_device(*c, "galaxy-s25").size(), 4u);
  auto ours = records_for_device(*c, "galaxy-s25", {"ours"});
  ASSERT_EQ(ours.size(), 3u);
  EXPECT_EQ(ours[0].variant_key, model::preset("roll").key());
  EXPECT_DOUBLE_EQ(ours[0].ms, 1.702);
  EXPECT_TRUE(records_for_device(*c, "nobody").empty());
}

}  // namespace
}  // namespace layoutx::db
