// Issue #32 item 12: output that says what its figures are. select shows the incumbent's SNR
// beside the fidelity floor (so "at most 1 dB below the incumbent" can be checked); step names
// its precision and how its interval combines the layers' bounds; a model with no sliding layers
// is not called a hybrid "1.00x faster" than itself.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "tests/cli/run_layoutx.h"

namespace {

using layoutx::test::has;
using layoutx::test::layoutx;
using layoutx::test::Result;

double number_after(const std::string& text, const std::string& field) {
  std::smatch m;
  const std::regex re("\"" + field + "\": (-?[0-9.eE+-]+)");
  if (!std::regex_search(text, m, re)) return -1e9;
  return std::stod(m[1]);
}

TEST(OutputWords, SelectShowsTheIncumbentsSnrBesideTheFloor) {
  Result j = layoutx("select --ctx 1024 --precision w4a16 --json");
  ASSERT_EQ(j.status, 0) << j.out;
  const double inc = number_after(j.out, "incumbent_snr_db"), floor = number_after(j.out, "fidelity_floor_db");
  ASSERT_GT(inc, 0) << j.out;
  EXPECT_NEAR(inc - floor, 1.0, 1e-9) << j.out;  // the default slack: 1 dB below the incumbent
  Result t = layoutx("select --ctx 1024 --precision w4a16");
  ASSERT_EQ(t.status, 0) << t.out;
  EXPECT_TRUE(has(t.out, "sliding fidelity floor ")) << t.out;
  EXPECT_TRUE(has(t.out, "= the incumbent roll's ")) << t.out;
  // Without a check there is no floor: null in JSON, no line in the text.
  Result n = layoutx("select --ctx 1024 --precision w4a16 --no-fidelity --json");
  ASSERT_EQ(n.status, 0) << n.out;
  EXPECT_TRUE(has(n.out, "\"incumbent_snr_db\": null")) << n.out;
  EXPECT_TRUE(has(n.out, "\"fidelity_floor_db\": null")) << n.out;
}

TEST(OutputWords, StepNamesItsPrecisionAndItsInterval) {
  Result t = layoutx("step --precision fp16 --ctx 4096");
  ASSERT_EQ(t.status, 0) << t.out;
  EXPECT_TRUE(has(t.out, " at fp16, ctx 4096 on ")) << t.out;
  EXPECT_TRUE(has(t.out, "interval: the sum of the layers' bounds")) << t.out;
  Result j = layoutx("step --precision w8a16 --ctx 4096 --json");
  ASSERT_EQ(j.status, 0) << j.out;
  EXPECT_TRUE(has(j.out, "\"precision\": \"w8a16\"")) << j.out;
  EXPECT_TRUE(has(j.out, "\"step_interval_rule\": \"the sum of the layers' bounds")) << j.out;
  Result s = layoutx("step --precision w8a16 --sweep-ctx 1024:2048");
  ASSERT_EQ(s.status, 0) << s.out;
  EXPECT_TRUE(has(s.out, " at w8a16 on ")) << s.out;
}

TEST(OutputWords, NoHybridSpeedupForAModelWithoutSlidingLayers) {
  const std::string llama = std::string(LAYOUTX_TEST_DIR) + "/fixtures/hf/llama3.2-1b.json";
  Result t = layoutx("step --model " + llama + " --ctx 4096");
  ASSERT_EQ(t.status, 0) << t.out;
  EXPECT_FALSE(has(t.out, "hybrid is")) << t.out;
  EXPECT_TRUE(has(t.out, "no sliding layers")) << t.out;
  Result s = layoutx("step --model " + llama + " --sweep-ctx 1024:2048");
  ASSERT_EQ(s.status, 0) << s.out;
  EXPECT_TRUE(has(s.out, "has no sliding layers")) << s.out;
  Result j = layoutx("step --model " + llama + " --ctx 4096 --json");
  ASSERT_EQ(j.status, 0) << j.out;
  EXPECT_TRUE(has(j.out, "\"has_sliding_layers\": false")) << j.out;
  // Spark has them: the hybrid comparison stays.
  Result spark = layoutx("step --ctx 4096");
  ASSERT_EQ(spark.status, 0) << spark.out;
  EXPECT_TRUE(has(spark.out, "hybrid is")) << spark.out;
}

}  // namespace
