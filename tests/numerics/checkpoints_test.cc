// The checkpointed history (checkpoints.h) gives, at its measured steps, the outputs of the
// step-by-step run bit for bit: the cache rebuilt from the tokens' own entries is the one the
// run keeps, for the roll and the ring, sliding and full, float and quantized (calibrated).
#include <gtest/gtest.h>

#include "model/builder.h"
#include "model/numerics/checkpoints.h"
#include "model/numerics/fidelity.h"
#include "model/numerics/runtime.h"
#include "tiny_layer.h"

namespace layoutx::model::numerics {
namespace {

constexpr uint64_t kSeed = 5;

LayerSpec wide_window(LayerType type) {
  LayerSpec L = tiny_layer(type, 160);
  if (type == LayerType::kSliding) {
    L.window = 40;
    L.cache_entries = 39;
  }
  return L;
}

TEST(Checkpoints, MeasuredStepsEqualTheStepByStepRun) {
  const std::vector<Segment> segments = {{0, 3}, {37, 45}, {90, 92}, {150, 158}};
  for (LayerType type : {LayerType::kSliding, LayerType::kFull})
    for (const char* form : {"ring", "roll", "score-join"})
      for (Precision p : {Precision::kFp16, Precision::kW8A16, Precision::kW4A16}) {
        SCOPED_TRACE(std::string(to_string(type)) + " " + form + " " + to_string(p));
        const LayerSpec L = wide_window(type);
        const LayerGraph g = build_layer_graph(L, preset(form, p));
        const LayerWeights w = seeded_weights(L, kSeed);
        const Sequence in = token_inputs(L.hidden, 158, kSeed);
        PreparedWeights<float> exact(w, false), simulated(w, true);
        const ActivationRanges ranges = calibrate_activations<float>(g, exact, calibration_inputs(L.hidden, 158, 1), 8);
        SimOptions opt;
        opt.simulate_precision = true;
        opt.ranges = &ranges;
        const Sequence all = simulate<float>(g, simulated, in, opt);
        const Sequence some = simulate_segments<float>(g, simulated, in, segments, opt, 2);
        const std::vector<int> steps = measured_steps(segments);
        ASSERT_EQ(some.size(), steps.size());
        for (size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(some[i], all[steps[i]]) << "step " << steps[i];
      }
}

TEST(Checkpoints, CalibrationRecordsTheSameRangesAsTheWholeRun) {
  for (const char* form : {"ring", "roll", "score-join"}) {
    const LayerSpec L = wide_window(LayerType::kSliding);
    const LayerGraph g = build_layer_graph(L, preset(form, Precision::kW8A16));
    const LayerWeights w = seeded_weights(L, kSeed);
    PreparedWeights<float> exact(w, false);
    const Sequence history = calibration_inputs(L.hidden, 120, 1);
    ActivationRanges whole;
    SimOptions opt;
    opt.record = &whole;
    opt.record_from_step = 112;
    simulate<float>(g, exact, history, opt);
    const ActivationRanges rebuilt = calibrate_activations<float>(g, exact, history, 8);
    ASSERT_EQ(rebuilt.size(), whole.size());
    for (const auto& [op, r] : whole) {
      EXPECT_EQ(rebuilt.at(op).lo, r.lo) << form << " " << op;
      EXPECT_EQ(rebuilt.at(op).hi, r.hi) << form << " " << op;
    }
  }
}

TEST(Checkpoints, LongHistoriesAreSampledShortOnesMeasuredWhole) {
  EXPECT_EQ(measured_steps(checkpoint_segments(kDenseHistory)).size(), size_t(kDenseHistory));
  const auto s = checkpoint_segments(4104);
  ASSERT_EQ(s.size(), size_t(kSegments));
  EXPECT_EQ(s.back().end, 4104);  // the last steps: full window, wrapped ring
  for (const auto& seg : s) EXPECT_EQ(seg.end - seg.begin, kSegmentSteps);
}

}  // namespace
}  // namespace layoutx::model::numerics
