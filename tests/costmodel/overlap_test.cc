// Cost model 3's overlap (costmodel/overlap.h): sides from the device's units, the shorter side
// scaled, and a fit that recovers a roofline device the additive model cannot.
#include <gtest/gtest.h>

#include <cmath>

#include "costmodel/calibration.h"
#include "costmodel/device_spec.h"
#include "costmodel/measurements.h"
#include "costmodel/op_level_predictor.h"
#include "costmodel/overlap.h"
#include "support/paths.h"

namespace layoutx::costmodel {
namespace {

size_t index_of(const DeviceSpec& d, const std::string& name) {
  for (size_t i = 0; i < d.coefficients.size(); ++i)
    if (d.coefficients[i].name == name) return i;
  ADD_FAILURE() << name;
  return 0;
}

TEST(Overlap, SidesFollowTheUnitsAndTheCopiesSwitch) {
  DeviceSpec d = load_device_named("galaxy-s25");
  std::vector<Side> s = coefficient_sides(d);
  EXPECT_EQ(s[index_of(d, "dispatch")], Side::kSerial);
  EXPECT_EQ(s[index_of(d, "graph_execute")], Side::kSerial);
  EXPECT_EQ(s[index_of(d, "weight_stream_q")], Side::kMemory);
  EXPECT_EQ(s[index_of(d, "matrix_unit_a16")], Side::kCompute);
  EXPECT_EQ(s[index_of(d, "vector")], Side::kCompute);
  EXPECT_EQ(s[index_of(d, "data_movement")], Side::kMemory);  // copies on the DMA engine by default
  EXPECT_EQ(s[index_of(d, "boundary_output")], Side::kMemory);
  d.structure.set(Switch::kCopiesOn, 1);  // vector
  s = coefficient_sides(d);
  EXPECT_EQ(s[index_of(d, "data_movement")], Side::kCompute);
  EXPECT_EQ(s[index_of(d, "boundary_output")], Side::kCompute);
  EXPECT_EQ(s[index_of(d, "weight_stream_q")], Side::kMemory);
}

// serial 1 us, memory 2 us, compute 5 us: additive 8, half 7, roofline 6; the effective row
// prices it.
TEST(Overlap, TheShorterSideIsScaled) {
  const std::vector<Side> sides{Side::kSerial, Side::kMemory, Side::kCompute};
  const Eigen::VectorXd row = Eigen::Vector3d(1, 1, 1), theta = Eigen::Vector3d(1, 2, 5);
  for (auto [f, t] : {std::pair{0.0, 8.0}, {0.5, 7.0}, {1.0, 6.0}}) {
    EXPECT_NEAR(effective_row(sides, f, row, theta).dot(theta), t, 1e-12) << f;
    const SideScale sc = side_scale(sides, f, row, theta);
    EXPECT_EQ(sc.memory_shorter, f > 0) << f;
    // Each op priced at its side's scale sums to the layer's time.
    EXPECT_NEAR(row.dot(scaled_theta(sides, sc, theta)), t, 1e-12) << f;
  }
  // Memory the longer: compute is hidden.
  const Eigen::VectorXd heavy = Eigen::Vector3d(1, 10, 1);
  EXPECT_NEAR(effective_row(sides, 1.0, heavy, theta).dot(theta), 1 + 20, 1e-12);
}

// Timings made by a roofline device (weights streaming at 1.5x the prior cost, vector work at
// half): the fit under the roofline structure reproduces them, alternating the shorter-side
// assignment with the linear fit; the additive structure cannot.
TEST(Overlap, TheFitRecoversARooflineDevice) {
  DeviceSpec truth = load_device_named("galaxy-s25");
  truth.hypotheses.clear();
  truth.structure.set(Switch::kOverlap, 1);
  Calibration made = prior_calibration(truth);
  made.theta[static_cast<Eigen::Index>(index_of(truth, "weight_stream_q"))] *= 1.5;
  made.theta[static_cast<Eigen::Index>(index_of(truth, "vector"))] *= 0.5;
  const OpLevelPredictor device(truth, made, RuleSet{});
  std::vector<MeasurementRecord> records;
  for (MeasurementRecord r : load_measurements(device_file(truth.calibration.measurements)))
    if (r.kind == MeasurementRecord::Kind::kLayerTime) {
      r.ms = device.predict(build_graph(r)).latency_ms;
      records.push_back(r);
    }
  auto worst = [&](const DeviceSpec& d) {
    double w = 0;
    for (const FitRow& row : calibrate(records, d).rows) w = std::max(w, std::abs(row.residual / row.measured));
    return w;
  };
  DeviceSpec additive = truth;
  additive.structure.set(Switch::kOverlap, 0);
  const double fitted = worst(truth), plain = worst(additive);
  EXPECT_LT(fitted, 0.02);
  EXPECT_GT(plain, 2 * fitted) << "roofline " << fitted << ", additive " << plain;
}

}  // namespace
}  // namespace layoutx::costmodel
