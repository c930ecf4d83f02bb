#include "db/regress.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "db/ingest.h"
#include "model/variant.h"
#include "db/schema.h"
#include "support/error.h"
#include "tests/db/db_test_util.h"

namespace layoutx::db {
namespace {

IngestContext ours() {
  IngestContext c;
  c.device = "galaxy-s25";
  return c;
}

// A stand-in predictor: a fixed interval per key, so the test states what is expected.
PredictFn fixed(double ms, double half_width) {
  return [=](const MeasurementKey&) -> std::optional<PredictedLatency> {
    return PredictedLatency{ms, ms - half_width, ms + half_width, "test-cal"};
  };
}
PredictFn none() {
  return [](const MeasurementKey&) -> std::optional<PredictedLatency> { return std::nullopt; };
}

const RegressRow* find(const RegressResult& r, const std::string& layer) {
  for (const auto& row : r.rows)
    if (row.key.layer_type == layer && model::parse_variant(row.key.variant_key).returns() == model::KvReturn::kWindow) return &row;
  return nullptr;
}

TEST(Regress, CleanWhenWithinToleranceAndNoPredictor) {
  auto c = open_database(test::temp_path("x.db"));
  ingest_file(*c, test::fixture("ours_roll.csv"), ours());
  ingest_file(*c, test::fixture("ours_roll_later.csv"), ours());
  auto r = regress(*c, {}, none());
  EXPECT_FALSE(r.any_regression);
  ASSERT_EQ(r.rows.size(), 3u);
  const RegressRow* roll = find(r, "sliding");
  ASSERT_NE(roll, nullptr);
  EXPECT_EQ(roll->history_ms, (std::vector<double>{1.702, 1.736}));
  EXPECT_DOUBLE_EQ(*roll->change, (1.736 - 1.702) / 1.702);  // +2.0%: inside the 3% default
  EXPECT_EQ(roll->prediction_status, "no predictor");
}

TEST(Regress, FindsThePlantedRegression) {
  auto c = open_database(test::temp_path("x.db"));
  ingest_file(*c, test::fixture("ours_roll.csv"), ours());
  ingest_file(*c, test::fixture("ours_roll_regressed.csv"), ours());
  auto r = regress(*c, {}, none());
  EXPECT_TRUE(r.any_regression);
  const RegressRow* roll = find(r, "sliding");
  ASSERT_NE(roll, nullptr);
  EXPECT_TRUE(roll->slower_than_previous);
  EXPECT_DOUBLE_EQ(*roll->change, (1.944 - 1.702) / 1.702);
  int regressions = 0;
  for (const auto& row : r.rows) regressions += row.regression;
  EXPECT_EQ(regressions, 1);
  // A looser tolerance lets it pass.
  RegressOptions loose;
  loose.tolerance = 0.15;
  EXPECT_FALSE(regress(*c, loose, none()).any_regression);
}

TEST(Regress, AgainstThePredictionInterval) {
  auto c = open_database(test::temp_path("x.db"));
  ingest_file(*c, test::fixture("ours_roll.csv"), ours());  // 1.702, 2.981, 1.490 ms
  auto within = regress(*c, {}, fixed(2.0, 1.1));            // [0.9, 3.1]
  EXPECT_FALSE(within.any_regression);
  for (const auto& row : within.rows) EXPECT_EQ(row.prediction_status, "within interval");
  auto tight = regress(*c, {}, fixed(1.6, 0.2));             // [1.4, 1.8]: full ring 2.981 is above
  EXPECT_TRUE(tight.any_regression);
  int slower = 0;
  for (const auto& row : tight.rows) slower += row.prediction_status == "slower than predicted";
  EXPECT_EQ(slower, 1);
  auto fast = regress(*c, {}, fixed(5.0, 0.5));              // everything below the interval: flagged, not failing
  EXPECT_FALSE(fast.any_regression);
  EXPECT_EQ(fast.rows[0].prediction_status, "faster than predicted");
  // Nothing is stored unless asked; then each prediction once per key and calibration.
  EXPECT_EQ(test::rows(*c, "predictions"), 0);
  RegressOptions record;
  record.record_predictions = true;
  regress(*c, record, fixed(2.0, 1.1));
  regress(*c, record, fixed(1.6, 0.2));
  regress(*c, record, fixed(5.0, 0.5));
  EXPECT_EQ(test::rows(*c, "predictions"), 3 * 3);
  regress(*c, record, fixed(5.0, 0.5));
  EXPECT_EQ(test::rows(*c, "predictions"), 3 * 3);
}

TEST(Regress, PredictorFailureIsReportedOnTheRow) {
  auto c = open_database(test::temp_path("x.db"));
  ingest_file(*c, test::fixture("ours_roll.csv"), ours());
  auto r = regress(*c, {}, [](const MeasurementKey&) -> std::optional<PredictedLatency> { throw Error("no model config"); });
  EXPECT_EQ(r.rows[0].prediction_status, "prediction failed: no model config");
  EXPECT_FALSE(r.any_regression);
  // Counted, so that the verb never calls such a row "ok" (it exits 2).
  EXPECT_TRUE(r.rows[0].prediction_failed);
  EXPECT_EQ(r.prediction_failures, static_cast<int>(r.rows.size()));
  EXPECT_EQ(regress(*c, {}, fixed(2.0, 1.1)).prediction_failures, 0);
}

TEST(Regress, DifferentBoundariesAreNotCompared) {
  auto c = open_database(test::temp_path("x.db"));
  IngestContext g = ours();
  g.variant = "roll";
  g.layer = "sliding";
  g.ctx = 4096;
  ingest_file(*c, test::fixture("ours_roll.csv"), ours());                // ours: 1.702 ms
  ingest_file(*c, test::fixture("ort_roll_sliding_fp16.json"), g);        // ort_node: 4.665 ms (CPU)
  RegressOptions o;  // the device's boundaries (configs/devices/galaxy-s25.yaml): not ort_node
  o.predicts = [](const MeasurementKey& k) { return k.boundary == "ours" || k.boundary == "aihub_estimate"; };
  auto r = regress(*c, o, fixed(2.0, 1.1));  // [0.9, 3.1]: ours all inside, ORT 4.665 ms would not be
  EXPECT_FALSE(r.any_regression);
  ASSERT_EQ(r.rows.size(), 4u);
  int not_predicted = 0;
  for (const auto& row : r.rows) not_predicted += row.prediction_status == "not predicted (boundary ort_node)";
  EXPECT_EQ(not_predicted, 1);
}

TEST(Regress, FiltersByDevice) {
  auto c = open_database(test::temp_path("x.db"));
  ingest_file(*c, test::fixture("ours_roll.csv"), ours());
  IngestContext other = ours();
  other.device = "other-phone";
  ingest_file(*c, test::fixture("ours_roll_regressed.csv"), other);
  RegressOptions o;
  o.device = "galaxy-s25";
  EXPECT_EQ(regress(*c, o, none()).rows.size(), 3u);
  o.device = "other-phone";
  EXPECT_EQ(regress(*c, o, none()).rows.size(), 2u);
  o.device = "";
  o.model = "spark-x2.5-1.7b";
  EXPECT_EQ(regress(*c, o, none()).rows.size(), 5u);
  o.model = "gemma-3-1b";
  EXPECT_EQ(regress(*c, o, none()).rows.size(), 0u);
}

}  // namespace
}  // namespace layoutx::db
