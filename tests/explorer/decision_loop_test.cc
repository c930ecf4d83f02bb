// The measurement loop against a simulated device: the answers go through an AI Hub profile, the
// database and a recalibration; next needs fewer measurements than random or grid sampling.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "costmodel/op_level_predictor.h"
#include "explorer/decision_loop.h"
#include "model/model_loader.h"
#include "support/paths.h"
#include "tests/temp_dir.h"

namespace layoutx::explorer {
namespace {

LoopSetup setup(const std::string& dir) {
  LoopSetup s;
  s.model = model::load_model(model::kDefaultModel);
  s.device = costmodel::load_device_named(costmodel::kDefaultDevice);
  s.rules = costmodel::load_device_rules(s.device);
  s.first_export = costmodel::load_measurements(costmodel::device_file(s.device.calibration.measurements));
  s.scratch_dir = dir;
  // The team's layout question: the exporter forms stay at the default variant's values (f16
  // cache, transposed K, per-channel 4-bit weights, the window's cache), so a round selects among
  // the layout axes' 40-odd variants per layer, not all 2880 with every hypothesis (which took
  // over 300 s a test on 2 cores).
  s.fixed_axes = exporter_forms_at_defaults(s.precision);
  return s;
}

TEST(DecisionLoop, EveryStrategyStartsFromTheSameTruthAndAnswersThroughTheDatabase) {
  layoutx::test::TempDir dir("loop");
  LoopSetup s = setup(dir.path().string());
  int converged = 0;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    LoopRun a = run_loop(s, seed, Strategy::kNext), b = run_loop(s, seed, Strategy::kGrid);
    // Round 0 (before any measurement) is the same decision for both.
    EXPECT_EQ(a.measurements == 0, b.measurements == 0) << seed;
    // One line per measurement, then the verdict. (A run can stay wrong: when the truth's best is
    // a few percent faster, inside what the model can resolve, select keeps the fewer changes.)
    if (a.converged) {
      EXPECT_EQ(static_cast<int>(a.log.size()), a.measurements + 1) << seed;
    }
    converged += a.converged;
  }
  EXPECT_GE(converged, 3);
  // The timings went into a database file per run.
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "loop-1-next.sqlite"));
}

// One structure (the truth has the base spec's, the loop fits it): next needs fewer measurements
// than random and than grid sampling over 20 seeds. With competing structures, see
// decision_loop_report (and the test below).
TEST(DecisionLoop, NextNeedsFewerMeasurementsThanRandomAndGrid) {
  layoutx::test::TempDir dir("loop");
  LoopSetup s = setup(dir.path().string());
  s.competing_structures = false;
  int next = 0, random = 0, grid = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    next += run_loop(s, seed, Strategy::kNext).measurements;
    random += run_loop(s, seed, Strategy::kRandom).measurements;
    grid += run_loop(s, seed, Strategy::kGrid).measurements;
  }
  EXPECT_LT(next, random);
  EXPECT_LT(next, grid);
}

// Competing structures: each seed's truth is one of the device's hypotheses (seeds differ), and
// the loop decides with the fitted mixture; without them the truth is the base spec.
TEST(DecisionLoop, TruthsDrawAHypothesisAndTheMixtureDecides) {
  layoutx::test::TempDir dir("loop");
  LoopSetup s = setup(dir.path().string());
  std::set<std::string> drawn;
  int right_mixture = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    s.competing_structures = true;
    LoopRun a = run_loop(s, seed, Strategy::kGrid);
    s.competing_structures = false;
    LoopRun b = run_loop(s, seed, Strategy::kGrid);
    EXPECT_FALSE(a.truth_hypothesis.empty()) << seed;
    EXPECT_TRUE(b.truth_hypothesis.empty()) << seed;
    drawn.insert(a.truth_hypothesis);
    right_mixture += a.measurements == 0;
  }
  EXPECT_GE(drawn.size(), 4u);
  EXPECT_GE(right_mixture, 1);
}

}  // namespace
}  // namespace layoutx::explorer
