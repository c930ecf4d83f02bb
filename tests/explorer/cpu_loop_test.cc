// The CPU loop (explorer/cpu_loop.h): its experiment design (which points calibrate, which are
// held out) and, with a fake runner, what its hypotheses make of the profiles.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "costmodel/op_level_predictor.h"
#include "explorer/cpu_loop.h"
#include "model/builder.h"
#include "model/model_loader.h"
#include "support/error.h"
#include "tests/temp_dir.h"

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

// An ONNX Runtime profile (db/ingest_ort_json.cc's format) of `runs` runs in which each of the
// prediction's ops is one node taking its predicted time times `scale`; returns `path`.
std::string write_profile(const std::string& path, const costmodel::Prediction& p, int runs, double scale) {
  std::ostringstream json;
  json << "[";
  bool first = true;
  for (int r = 0; r < runs; ++r)
    for (const costmodel::OpCost& op : p.ops) {
      json << (first ? "" : ",") << "{\"cat\": \"Node\", \"name\": \"" << op.name << "_kernel_time\", \"dur\": "
           << op.ms * 1e3 * scale << ", \"args\": {\"op_name\": \"" << op.kind
           << "\", \"provider\": \"CPUExecutionProvider\"}}";
      first = false;
    }
  json << "]";
  std::ofstream(path) << json.str();
  return path;
}

// The loop end to end without ONNX Runtime: a runner writes the profile a CPU following one of
// the device's hypotheses at its priors would (one node event per lowered op and run, the op's
// predicted time). Where the generating structure is one the other option cannot mimic (copied
// outputs' bytes; a tanh GELU slower than erf, once a tanh point is calibrated), the mixture
// rules the other out. Where the other option nests it (a copy rate can fall to an alias's; two
// GELU coefficients can be equal) the generating one is favoured or the weight stays split, and
// with tanh held out nothing measured tells the GELU forms apart: the weight stays split.
TEST(CpuLoop, ProfilesOfOneStructureMoveTheWeightWhereTheyCanTell) {
  const costmodel::DeviceSpec dev = costmodel::load_device_named("onnxruntime-cpu");
  const model::ModelSpec m = model::load_model("spark-x2.5-1.7b");
  const test::TempDir dir("cpu-loop-fake");
  ASSERT_EQ(dev.hypotheses.size(), 4u);
  std::vector<LoopPoint> with_tanh = default_loop_points(1024);
  for (LoopPoint& p : with_tanh)
    if (p.variant.gelu() == model::GeluForm::kTanh && p.ctx == 1024) p.calibrate = true;
  for (const costmodel::HypothesisSpec& truth : dev.hypotheses) {
    const costmodel::DeviceSpec d = costmodel::with_hypothesis(dev, truth);
    const costmodel::OpLevelPredictor generator(d, costmodel::prior_calibration(d), costmodel::RuleSet{});
    auto run = [&](const model::LayerSpec& layer, const model::Variant& v, size_t i) {
      const costmodel::Prediction p = generator.predict(model::build_layer_graph(layer, v));
      const std::string path = write_profile(dir / ("p" + std::to_string(i) + ".json"), p, 3, 1.0);
      return PointRun{path, {p.latency_ms}, "fake"};
    };
    // The weight of each axis's generating option, summed over the other axis.
    const std::string gelu = truth.name.substr(0, truth.name.find('/')), output = truth.name.substr(truth.name.find('/') + 1);
    auto weights = [&](const LoopReport& rep) {
      double w_gelu = 0, w_output = 0;
      for (const LoopHypothesis& h : rep.hypotheses) {
        if (h.name.rfind(gelu + "/", 0) == 0) w_gelu += h.weight;
        if (h.name.size() > output.size() && h.name.compare(h.name.size() - output.size(), output.size(), output) == 0)
          w_output += h.weight;
      }
      return std::make_pair(w_gelu, w_output);
    };
    const LoopReport held = run_cpu_loop("spark-x2.5-1.7b", m, default_loop_points(1024), dev, run, nullptr);
    EXPECT_GT(held.shares, 0);
    const auto [gelu_held, output_held] = weights(held);
    EXPECT_GT(output_held, output == "output-copied" ? 0.9 : 0.4) << truth.name;
    EXPECT_GT(gelu_held, 0.3) << truth.name;
    EXPECT_LT(gelu_held, 0.7) << truth.name;
    const LoopReport told = run_cpu_loop("spark-x2.5-1.7b", m, with_tanh, dev, run, nullptr);
    EXPECT_GT(weights(told).first, gelu == "gelu-as-written" ? 0.9 : 0.55) << truth.name;
  }
}

// Passes go round every point; a point's timing is its median pass, so a slow spell that hits
// one pass of every point leaves the timings alone, and the spread says it happened.
TEST(CpuLoop, PassesKeepEachPointsMedianPass) {
  const costmodel::DeviceSpec dev = costmodel::load_device_named("onnxruntime-cpu");
  const model::ModelSpec m = model::load_model("spark-x2.5-1.7b");
  const test::TempDir dir("cpu-loop-passes");
  const std::vector<LoopPoint> points = default_loop_points(1024);
  const costmodel::OpLevelPredictor generator(dev, costmodel::prior_calibration(dev), costmodel::RuleSet{});
  std::vector<size_t> calls;
  auto run = [&](const model::LayerSpec& layer, const model::Variant& v, size_t i) {
    calls.push_back(i);
    const double slow = i / points.size() == 1 ? 1.5 : 1.0;  // the second pass is a slow spell
    const costmodel::Prediction p = generator.predict(model::build_layer_graph(layer, v));
    const std::string path = write_profile(dir / ("p" + std::to_string(i) + ".json"), p, 1, slow);
    return PointRun{path, {p.latency_ms * slow}, "fake"};
  };
  const LoopReport rep = run_cpu_loop("spark-x2.5-1.7b", m, points, dev, run, nullptr, 3);
  ASSERT_EQ(calls.size(), 3 * points.size());
  EXPECT_EQ(calls[points.size()], points.size());  // the second pass starts after the whole first
  EXPECT_EQ(rep.passes, 3);
  for (const LoopRow& row : rep.rows) {
    const double truth = generator.predict(model::build_layer_graph(m.layer(row.point.type, row.point.ctx), row.point.variant)).latency_ms;
    EXPECT_NEAR(row.measured_ms, truth, 1e-6 * truth) << row.point.variant.key();
    EXPECT_NEAR(row.spread, 0.5, 1e-6);
  }
  EXPECT_THROW(run_cpu_loop("spark-x2.5-1.7b", m, points, dev, run, nullptr, 0), Error);
}

}  // namespace
}  // namespace layoutx::explorer
