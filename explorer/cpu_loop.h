// The loop on the CPU (issue #7, item 5) as a pipeline: measure layer variants on this machine
// with a runner the caller hands in (emit's ONNX Runtime runner, emit/cpu_runner.h), store each
// profile in the database, calibrate the cost model (costmodel/) on a subset with the device spec
// configs/devices/onnxruntime-cpu.yaml (with its hypotheses, combined by weight, as the HTP's are),
// predict the held-out rest, report measured vs predicted.
// The structure is the HTP cost model's own (lowering, features, ridge toward priors): if it is
// right, it must predict CPU variants it was not calibrated on too.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "costmodel/calibration.h"
#include "costmodel/device_spec.h"
#include "db/connection.h"
#include "model/model_spec.h"
#include "model/variant.h"

namespace layoutx::explorer {

struct LoopPoint {
  model::LayerType type = model::LayerType::kSliding;
  int ctx = 4096;
  model::Variant variant;
  bool calibrate = false;  // in the calibration subset; else held out
};

struct LoopRow {
  LoopPoint point;
  double measured_ms = 0;   // median over timed runs of the sum of ORT node kernel times (the median pass)
  double spread = 0;        // (slowest - fastest pass) / measured_ms; 0 with one pass
  double wall_ms = 0;       // median session.run wall time (JS side), for reference
  double predicted_ms = 0, low_ms = 0, high_ms = 0;
  double rel_error = 0;     // (predicted - measured) / measured
};

// One of the device's hypotheses fitted on the calibration subset (costmodel/hypothesis_fit.h).
struct LoopHypothesis {
  std::string name;
  double weight = 0, elpd = 0;
  double loo_median = 0;  // its leave-one-out |relative error| median over the subset
};

struct LoopReport {
  std::vector<LoopRow> rows;
  costmodel::FitReport fit;  // the device spec as written (its base structure)
  // When the device has hypotheses, each fitted and the predictions their mixture's (the HTP's
  // machinery); else empty and the predictions the one fit's.
  std::vector<LoopHypothesis> hypotheses;
  std::string predictor_id;  // the id of what predicted the rows
  int shares = 0;            // op shares (GELU, outputs) the calibration points' profiles added
  int passes = 1;            // rounds over every point
  int held_out = 0;
  int held_out_within_10pct = 0;
};

// The default point set for a model: sliding at `ctx`, full at ctx/4, ctx/2 and ctx; forms
// roll, ring, score-join (calibration, except full at ctx/2 which is held out whole) and the
// explicit softmax, tanh GELU and mul_reducesum forms (held out everywhere). Float ("fp16") only.
std::vector<LoopPoint> default_loop_points(int ctx);

// What a runner returns for one point: the ONNX Runtime profile (JSON, db/ingest_ort_json.cc's
// format) and the timed runs' wall times.
struct PointRun {
  std::string profile_path;     // non-empty
  std::vector<double> wall_ms;  // per timed run
  std::string runtime;          // for the database's notes, e.g. "onnxruntime-node 1.17, 1 thread(s)"
};
// Runs point number `index` (its layer at its context, its variant). Throws Error on failure.
using PointRunner = std::function<PointRun(const model::LayerSpec& layer, const model::Variant& v, size_t index)>;

// Runs every point with `run` in `passes` rounds over the whole set (the runner's index is
// pass * points + point), ingests each profile into `conn` (as the device spec's name) when
// given, takes each point's median pass, calibrates on the calibration subset and predicts every
// point. `model_arg` is what --model was (the records name it). The device must time layers as
// ONNX Runtime's profile does (its boundaries include db's ort_node). Throws Error on failure.
LoopReport run_cpu_loop(const std::string& model_arg, const model::ModelSpec& model, const std::vector<LoopPoint>& points,
                        const costmodel::DeviceSpec& device, const PointRunner& run, db::Connection* conn,
                        int passes = 1);

}  // namespace layoutx::explorer
