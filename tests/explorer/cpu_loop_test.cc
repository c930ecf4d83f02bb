// The CPU loop's experiment design (explorer/cpu_loop.h): which points calibrate, which are held out.
#include <gtest/gtest.h>

#include "explorer/cpu_loop.h"

namespace layoutx::explorer {
namespace {

using model::LayerType;

TEST(CpuLoop, DefaultPointsHoldOutAContextAndThreeForms) {
  auto pts = default_loop_points(4096);
  ASSERT_EQ(pts.size(), 6u * 4);  // 6 forms x (sliding, full at 1024, 2048, 4096)
  int cal = 0;
  for (const auto& p : pts) {
    cal += p.calibrate;
    const bool held_form = p.variant.softmax() == model::SoftmaxForm::kExplicit || p.variant.gelu() == model::GeluForm::kTanh;
    if ((p.type == LayerType::kFull && p.ctx == 2048) || held_form) {
      EXPECT_FALSE(p.calibrate) << p.variant.key();
    }
  }
  EXPECT_EQ(cal, 3 * 3);  // roll, ring, score-join at sliding, full 1024, full 4096
}

}  // namespace
}  // namespace layoutx::explorer
