// The VTCM live set as a device holds it (costmodel/device_live_set.h): the knees are the
// distinct VTCM budgets of the device's structure and hypotheses, ascending; a device that models
// no VTCM has none; the live set is the analysis under the device's padding and threshold.
#include <gtest/gtest.h>

#include "costmodel/device_live_set.h"
#include "model/builder.h"
#include "model/model_loader.h"

namespace layoutx::costmodel {
namespace {

TEST(DeviceLiveSet, KneesAreTheDistinctBudgetsOfTheStructureAndHypotheses) {
  const DeviceSpec s25 = load_device_named("galaxy-s25");
  // Base structure 4 MiB; hypotheses 2 (twice) and 2.5 (configs/devices/galaxy-s25.yaml).
  EXPECT_EQ(vtcm_knees_mib(s25), (std::vector<double>{2, 2.5, 4}));
  DeviceSpec none = s25;
  none.hypotheses.clear();
  EXPECT_EQ(vtcm_knees_mib(none), (std::vector<double>{4}));
  EXPECT_TRUE(vtcm_knees_mib(load_device_named("onnxruntime-cpu")).empty());
}

TEST(DeviceLiveSet, IsTheLiveSetUnderTheDevicesTilingAndThreshold) {
  const DeviceSpec s25 = load_device_named("galaxy-s25");
  const model::ModelSpec m = model::load_model("spark-x2.5-1.7b");
  const model::LayerGraph g =
      model::build_layer_graph(m.layer(model::LayerType::kFull, 1024), model::parse_variant("ring", {"precision=w8a16"}));
  const DeviceLiveSet v = device_live_set(g, s25);
  EXPECT_EQ(v.device, "galaxy-s25");
  EXPECT_DOUBLE_EQ(v.min_kib, s25.structure.live_min_kb());
  const LiveSet want = live_set(g, s25.channel_pad, static_cast<int64_t>(s25.structure.live_min_kb() * 1024));
  EXPECT_EQ(v.live.live_bytes, want.live_bytes);
  EXPECT_EQ(v.live.peak_bytes, want.peak_bytes);
  // Converted K, concatenated K, converted V of 1023 entries (cli_test): over the 2.5 MiB knee, not 4.
  EXPECT_GT(v.live.peak_bytes, 2.5 * 1048576);
  EXPECT_LT(v.live.peak_bytes, 4 * 1048576);
}

}  // namespace
}  // namespace layoutx::costmodel
