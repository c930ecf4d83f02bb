// Repeated timings of one graph: combined into one (mean, count, spread), so N copies do not
// count as N independent measurements in the fit or its leave-one-out figure.
#include "costmodel/repeated_timings.h"

#include <gtest/gtest.h>

#include <cmath>

#include "costmodel/calibration.h"
#include "costmodel/device_spec.h"
#include "costmodel/op_level_predictor.h"
#include "support/paths.h"

namespace layoutx::costmodel {
namespace {

// The shipped device and measurements, found as the executable finds them.
DeviceSpec device() { return load_device_named(kDefaultDevice); }
std::vector<MeasurementRecord> shipped() { return load_measurements(device_file(device().calibration.measurements)); }

// `values` (ms) of one graph from the database, reduced as the database reduces them.
RepeatedTiming copies_of(const MeasurementRecord& base, const std::vector<double>& values) {
  double mean = 0, m2 = 0;  // Welford
  for (size_t i = 0; i < values.size(); ++i) {
    const double d = values[i] - mean;
    mean += d / static_cast<double>(i + 1);
    m2 += d * (values[i] - mean);
  }
  RepeatedTiming t{base, static_cast<int>(values.size()), m2};
  t.record.ms = mean;
  t.record.id = "db:1";
  return t;
}

const MeasurementRecord& by_id(const std::vector<MeasurementRecord>& rs, const std::string& id) {
  for (const auto& r : rs)
    if (r.id == id || r.id.rfind(id + " (", 0) == 0) return r;
  throw std::runtime_error("no record " + id);
}

TEST(RepeatedTimings, DistinctGraphsPassThroughUnchanged) {
  auto rs = shipped();
  auto out = combine_repeated_timings(rs);
  ASSERT_EQ(out.size(), rs.size());
  EXPECT_EQ(canonical_text(out), canonical_text(rs));  // so the shipped calibration stays fresh
}

TEST(RepeatedTimings, CopiesBecomeOneMeanWithTheirSpread) {
  auto rs = shipped();
  const MeasurementRecord base = by_id(rs, "full4k-fp16");  // 2.964 ms, sd 0.02
  // 1000 copies from the database at base * (1 + 0.05 * u), u = -1 .. 1 evenly: mean = base,
  // sample sd = 0.05 * base * sd(u) with sd(u) = sqrt(sum u^2 / (n - 1)).
  const int n = 1000;
  std::vector<double> values;
  double sum_u2 = 0;
  for (int i = 0; i < n; ++i) {
    const double u = -1.0 + 2.0 * i / (n - 1);
    sum_u2 += u * u;
    values.push_back(base.ms * (1 + 0.05 * u));
  }
  const RepeatedTiming copies = copies_of(base, values);
  auto out = combine_repeated_timings(rs, {copies});
  ASSERT_EQ(out.size(), rs.size());  // one record for the graph, not 1001
  const MeasurementRecord& c = by_id(out, "full4k-fp16");
  EXPECT_EQ(c.id, "full4k-fp16 (mean of 1001)");
  EXPECT_NEAR(c.ms, base.ms, 1e-9);
  // Pooled spread of the 1001 values (the file's one sits at the mean): sqrt(m2 / 1000) / mean.
  const double want_sd = 0.05 * std::sqrt(sum_u2 / n);
  EXPECT_NEAR(c.sd, want_sd, 1e-6);
  EXPECT_GT(c.sd, base.sd);  // the observed spread is the noise estimate when above the stated sd
}

// The figure: 1000 copies of one timing move the leave-one-out median by no more than
// the copies' spread allows (here: their mean is 1% above the original, spread 1%), where
// counting them as 1000 independent timings made the median collapse toward 0%.
TEST(RepeatedTimings, ThousandCopiesMoveLooOnlyWithinTheirSpread) {
  const DeviceSpec dev = device();
  auto rs = shipped();
  const double before = calibrate(rs, dev).calibration.loo_median;
  const MeasurementRecord base = by_id(rs, "sliding-roll-w8a16");
  const int n = 1000;
  const double shift = 0.01, spread = 0.01;
  std::vector<double> values;
  for (int i = 0; i < n; ++i) values.push_back(base.ms * (1 + shift + spread * (i % 2 ? 1 : -1)));
  const RepeatedTiming copies = copies_of(base, values);
  auto combined = combine_repeated_timings(rs, {copies});
  const double after = calibrate(combined, dev).calibration.loo_median;
  EXPECT_LE(std::fabs(after - before), shift + spread) << "before " << before << " after " << after;
}

}  // namespace
}  // namespace layoutx::costmodel
