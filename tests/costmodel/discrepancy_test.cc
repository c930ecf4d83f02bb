// Cost model 3's model discrepancy (costmodel/discrepancy.h): known at the measured graphs, the
// model's own far from them, and saved with the calibration.
#include <gtest/gtest.h>

#include <cmath>

#include "costmodel/calibration.h"
#include "costmodel/device_spec.h"
#include "costmodel/discrepancy.h"
#include "costmodel/measurements.h"
#include "support/paths.h"

namespace layoutx::costmodel {
namespace {

Discrepancy two_measured() {
  Discrepancy d;
  d.rel_sd = 0.1;
  d.nugget_rel_sd = 0.02;
  d.distance_scale = 0.1;
  d.measured = {Eigen::Vector3d(1, 0, 0), Eigen::Vector3d(0, 1, 0)};
  d.residual = {0.1, -0.05};
  d.finish();
  return d;
}

TEST(Discrepancy, AMeasuredGraphIsCorrectedAndTightAFarOneIsTheModelsWithItsSd) {
  const Discrepancy d = two_measured();
  const Eigen::VectorXd theta = Eigen::Vector3d(1, 1, 1);
  // At the first measured graph (any row priced only on coefficient 0): about its residual, about
  // its noise as sd.
  const Discrepancy::At at = d.at(Eigen::Vector3d(3, 0, 0), theta);
  EXPECT_NEAR(at.correction, 0.1 * 0.01 / (0.01 + 0.0004), 2e-3);
  EXPECT_LT(at.rel_sd, 0.02);
  // A graph priced on a coefficient no measured graph used: no correction, the whole sd.
  const Discrepancy::At far = d.at(Eigen::Vector3d(0, 0, 1), theta);
  EXPECT_NEAR(far.correction, 0.0, 1e-3);
  EXPECT_NEAR(far.rel_sd, 0.1, 1e-3);
  // Between: part of each.
  const Discrepancy::At near = d.at(Eigen::Vector3d(0.95, 0, 0.05), theta);
  EXPECT_GT(near.correction, 0.02);
  EXPECT_LT(near.correction, at.correction);
  EXPECT_GT(near.rel_sd, at.rel_sd);
  EXPECT_LT(near.rel_sd, far.rel_sd);
}

TEST(Discrepancy, CompositionDistanceIsTotalVariation) {
  EXPECT_NEAR(composition_distance(Eigen::Vector2d(1, 0), Eigen::Vector2d(0, 1)), 1.0, 1e-12);
  EXPECT_NEAR(composition_distance(Eigen::Vector2d(0.5, 0.5), Eigen::Vector2d(0.75, 0.25)), 0.25, 1e-12);
  EXPECT_NEAR(composition(Eigen::Vector2d(2, 0), Eigen::Vector2d(3, 7))[0], 1.0, 1e-12);
}

// The shipped device's base fit: the discrepancy is estimated, saved and read back to the same
// figures; a measured graph's interval is tight, and its prediction near its measurement.
TEST(Discrepancy, TheFitSavesItAndMeasuredGraphsStayTight) {
  const DeviceSpec dev = load_device_named("galaxy-s25");
  const std::vector<MeasurementRecord> records = load_measurements(device_file(dev.calibration.measurements));
  const FitReport rep = calibrate(records, dev);
  const Calibration& c = rep.calibration;
  ASSERT_FALSE(c.discrepancy.empty());
  EXPECT_GT(c.discrepancy.rel_sd, c.discrepancy.nugget_rel_sd);
  const Calibration back = parse_calibration(calibration_document(c, &rep), "saved", dev);
  ASSERT_EQ(back.discrepancy.measured.size(), c.discrepancy.measured.size());
  // Through predict_row on each timed graph's row.
  const SubsetFits fits = fit_subsets(records, dev, {std::vector<bool>(records.size(), true)});
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].kind != MeasurementRecord::Kind::kLayerTime) continue;
    const RowPrediction p = predict_row(c, dev, fits.layer_rows[i]);
    const RowPrediction q = predict_row(back, dev, fits.layer_rows[i]);
    EXPECT_NEAR(p.ms, q.ms, 1e-6 * p.ms) << records[i].id;
    EXPECT_LT(std::abs(p.ms / records[i].ms - 1), 0.06) << records[i].id << ": corrected toward its measurement";
    EXPECT_LT(1.645 * p.sd_ms / p.ms, 0.08) << records[i].id << ": a measured graph's interval";
  }
}

}  // namespace
}  // namespace layoutx::costmodel
