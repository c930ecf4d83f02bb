// A transparent predictor for explorer tests: 2 us per op plus bytes over 50 GB/s, with a
// +-5% interval; refuses graphs with a ReduceMax under w4a16 (a stand-in for a legality rule).
// The explorer only sees the Predictor interface, so it can be tested apart from calibration.
#pragma once
#include <optional>

#include "costmodel/predictor.h"
#include "model/analysis.h"

namespace layoutx::explorer::testing {

class FakePredictor : public costmodel::Predictor {
 public:
  double rel_halfwidth = 0.05;
  // When set, every score-space join graph has this outcome (a stand-in for contested records).
  std::optional<costmodel::Compiles> scores_join_outcome;
  costmodel::Prediction predict(const model::LayerGraph& g) const override {
    auto st = model::analyze(g);
    auto t = model::totals(g, st);
    costmodel::Prediction p;
    p.latency_ms = t.op_count * 2e-3 + (t.bytes_read + t.bytes_written) / 50e9 * 1e3;
    p.low_ms = p.latency_ms * (1 - rel_halfwidth);
    p.high_ms = p.latency_ms * (1 + rel_halfwidth);
    p.floor_ms = (t.bytes_read + t.bytes_written) / 84.8e9 * 1e3;
    p.calibration_id = "fake";
    if (g.variant.precision() == model::Precision::kW4A16 && g.count(model::OpKind::kReduceMax) > 0) {
      p.legality.compiles = costmodel::Compiles::kNo;
      p.legality.reasons.push_back("fake-rule: ReduceMax under w4a16");
    } else if (scores_join_outcome && g.variant.join() == model::Join::kScores) {
      p.legality.compiles = *scores_join_outcome;
      p.legality.reasons.push_back("fake-records: score join");
    }
    return p;
  }
  std::string device() const override { return "fake-device"; }
  std::string calibration_id() const override { return "fake"; }
};

}  // namespace layoutx::explorer::testing
