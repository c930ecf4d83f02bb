// The loop on the CPU (issue #7, item 5): measure layer variants in ONNX Runtime on this
// machine, calibrate the cost model (costmodel/) on a subset with the device spec
// configs/devices/onnxruntime-cpu.yaml, predict the held-out rest, report measured vs predicted.
// The structure is the HTP cost model's own (lowering, features, ridge toward priors): if it is
// right, it must predict CPU variants it was not calibrated on too.
#pragma once
#include <string>
#include <vector>

#include "costmodel/calibration.h"
#include "costmodel/device_spec.h"
#include "db/sqlite.h"
#include "emit/ort_runner.h"
#include "model/model_spec.h"
#include "model/variant.h"

namespace layoutx::emit {

struct LoopPoint {
  model::LayerType type = model::LayerType::kSliding;
  int ctx = 4096;
  model::Variant variant;
  bool calibrate = false;  // in the calibration subset; else held out
};

struct LoopRow {
  LoopPoint point;
  double measured_ms = 0;   // median over timed runs of the sum of ORT node kernel times
  double wall_ms = 0;       // median session.run wall time (JS side), for reference
  double predicted_ms = 0, low_ms = 0, high_ms = 0;
  double rel_error = 0;     // (predicted - measured) / measured
};

struct LoopReport {
  std::vector<LoopRow> rows;
  costmodel::FitReport fit;
  int held_out = 0;
  int held_out_within_10pct = 0;
};

// The timing boundary of an ONNX Runtime profile (db/ingest_ort_json.cc): the device that
// measure runs on must name it among its `boundaries`. Throws Error naming the device file.
inline constexpr const char* kOrtBoundary = "ort_node";
void check_ort_device(const costmodel::DeviceSpec& device);

// The default point set for a model: sliding at `ctx`, full at ctx/4, ctx/2 and ctx; forms
// roll, ring, score-join (calibration, except full at ctx/2 which is held out whole) and the
// explicit softmax, tanh GELU and mul_reducesum forms (held out everywhere). Float ("fp16") only.
std::vector<LoopPoint> default_loop_points(int ctx);

// Measures every point (seeded weights, warm-up then timed runs), ingests each profile into
// `conn` (as the device spec's name) when given, calibrates on the calibration subset and predicts
// every point. `model_arg` is what --model was (records name it). Throws Error on failure.
LoopReport run_cpu_loop(const std::string& model_arg, const model::ModelSpec& model, const std::vector<LoopPoint>& points,
                        const costmodel::DeviceSpec& device, const MeasureOptions& opt, const std::string& work_dir,
                        db::Connection* conn);

}  // namespace layoutx::emit
