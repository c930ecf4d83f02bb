// A long history's outputs at chosen steps, without running every step in full. In one layer's
// decode the only state a step hands on is its K/V cache, and a token's entry depends on that
// token alone (its hidden state and position, through the K/V projections): the cache before
// step t is rebuilt from the entries of the tokens before it, each computed by the K/V part of
// the graph alone, and only the measured steps (and, for the roll, a few steps before them) run
// the whole graph. The outputs are those of the step-by-step run (simulate), not an estimate.
// The roll (returns=window) re-encodes every cached entry at each step, so a rebuilt entry is
// right only once that re-encoding has reached its fixed point: each segment of the roll runs
// kRollWarmup steps before its first measured one and checks that the last of them left the
// rebuilt entries unchanged; where not, that segment runs from step 0.
#pragma once
#include <vector>

#include "model/numerics/runtime.h"

namespace layoutx::model::numerics {

struct Segment {
  int begin = 0, end = 0;  // measured steps [begin, end)
};

// Histories up to kDenseHistory steps (a 512-token window's 520) are measured at every step;
// longer ones at kSegments segments of kSegmentSteps steps, spread evenly, the last ending the
// history (so it still sees the full window and the wrapped ring).
constexpr int kDenseHistory = 520, kSegments = 8, kSegmentSteps = 8, kRollWarmup = 4;
std::vector<Segment> checkpoint_segments(int steps);

// The steps of `segments` (in order, within hidden_in) flattened: which steps are measured.
std::vector<int> measured_steps(const std::vector<Segment>& segments);

// hidden_out at the measured steps (in order) of the run simulate(graph, weights, hidden_in,
// options) would make; runs the segments on up to `threads` threads (0: the machine's cores).
// options.record_from_step is ignored: only measured steps are recorded (calibration: a
// segment of the last samples). Throws Interrupted (support/progress.h) when asked to stop.
template <typename T>
Sequence simulate_segments(const LayerGraph& graph, PreparedWeights<T>& weights, const Sequence& hidden_in,
                           const std::vector<Segment>& segments, const SimOptions& options = {}, int threads = 0);

}  // namespace layoutx::model::numerics
