#include "emit/cpu_loop.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "costmodel/op_level_predictor.h"
#include "costmodel/legality.h"
#include "db/ingest.h"
#include "db/profile.h"
#include "emit/onnx_writer.h"
#include "emit/weights.h"
#include "model/builder.h"
#include "model/numerics/fidelity.h"
#include "model/numerics/weights.h"
#include "support/atomic_file.h"
#include "support/error.h"

namespace layoutx::emit {

namespace fs = std::filesystem;
using model::LayerType;

void check_ort_device(const costmodel::DeviceSpec& device) {
  if (std::find(device.boundaries.begin(), device.boundaries.end(), kOrtBoundary) != device.boundaries.end()) return;
  std::string list;
  for (const auto& b : device.boundaries) list += (list.empty() ? "" : ", ") + b;
  throw Error("--device: " + device.source + ": boundaries: " + device.name + " times layers as [" + list +
              "], not as " + kOrtBoundary + " (ONNX Runtime's profile on this machine's CPU; e.g. --device onnxruntime-cpu)");
}

std::vector<LoopPoint> default_loop_points(int ctx) {
  struct Form {
    const char* preset;
    std::vector<std::string> sets;
    bool calibrate;
  };
  const std::vector<Form> forms = {
      {"roll", {}, true},
      {"ring", {}, true},
      {"score-join", {}, true},
      {"score-join", {"softmax=explicit"}, false},
      {"ring", {"gelu=tanh"}, false},
      {"score-join", {"new_score=mul_reducesum", "new_value=broadcast_mul"}, false},
  };
  std::vector<LoopPoint> pts;
  for (const auto& f : forms) pts.push_back({LayerType::kSliding, ctx, model::parse_variant(f.preset, f.sets), f.calibrate});
  for (int c : {ctx / 4, ctx / 2, ctx})
    for (const auto& f : forms)
      pts.push_back({LayerType::kFull, c, model::parse_variant(f.preset, f.sets), f.calibrate && c != ctx / 2});
  return pts;
}

LoopReport run_cpu_loop(const std::string& model_arg, const model::ModelSpec& model, const std::vector<LoopPoint>& points,
                        const costmodel::DeviceSpec& device, const MeasureOptions& opt, const std::string& work_dir,
                        db::Connection* conn) {
  check_ort_device(device);
  LoopReport rep;
  std::vector<costmodel::MeasurementRecord> records;
  for (size_t i = 0; i < points.size(); ++i) {
    const LoopPoint& p = points[i];
    // 1. Emit the variant (seeded weights) and run it: warm-up, timed runs, profiling on.
    const auto layer = model.layer(p.type, p.ctx);
    auto g = model::build_layer_graph(layer, p.variant);
    auto w = model::numerics::seeded_weights(layer, 1);
    const fs::path dir = fs::path(work_dir) / ("point" + std::to_string(i));
    ensure_directory(dir);
    const std::string path = (dir / "model.onnx").string();
    write_onnx(to_onnx(g, LayerWeightsSource(w)), path);
    auto io = model::numerics::step_io(layer, p.variant, w, 1, 1);
    TensorMap inputs;
    for (const auto& [n, t] : io.at(0).inputs) inputs[n] = Tensor{t.shape, t.data};
    auto res = ort_measure(path, inputs, dir.string(), opt);
    std::error_code ec;
    fs::remove(path, ec);  // hundreds of MB per Spark layer; the profile and timings stay
    if (res.profile_path.empty()) throw Error("cpu loop: ONNX Runtime wrote no profile for " + p.variant.key());
    // 2. The layer time: median over timed runs of the summed node kernel times (what the
    //    ingester stores as the ort_node boundary).
    std::ifstream f(res.profile_path);
    const std::string text((std::istreambuf_iterator<char>(f)), {});
    auto prof = db::parse_ort_json(text, res.profile_path);
    LoopRow row;
    row.point = p;
    row.measured_ms = prof.layers.at(0).ms;
    row.wall_ms = db::median(res.runs_ms);
    // 3. Into the database as the device.
    if (conn) {
      db::IngestContext ctx;
      ctx.device = device.name;
      ctx.variant = p.variant.key();
      ctx.layer = model::to_string(p.type);
      ctx.ctx = p.ctx;
      ctx.model = model.name;
      ctx.format = db::Format::kOrtJson;
      ctx.notes = "layoutx measure --loop: onnxruntime-node " + res.ort_version + ", " + std::to_string(opt.threads) +
                  " thread(s), wall median " + std::to_string(row.wall_ms) + " ms";
      db::ingest_file(*conn, res.profile_path, ctx);
    }
    costmodel::MeasurementRecord r;
    r.kind = costmodel::MeasurementRecord::Kind::kLayerTime;
    r.id = std::string(model::to_string(p.type)) + "-" + std::to_string(p.ctx) + "-" + p.variant.key();
    r.source = res.profile_path;
    r.model = model_arg;
    r.layer = p.type;
    r.context = p.ctx;
    r.variant = p.variant;
    r.ms = row.measured_ms;
    r.sd = 0.05;  // relative: repeated ORT runs on a shared VM vary by a few percent
    records.push_back(r);
    rep.rows.push_back(row);
  }
  // 4. Calibrate on the subset.
  std::vector<costmodel::MeasurementRecord> cal;
  for (size_t i = 0; i < points.size(); ++i)
    if (points[i].calibrate) cal.push_back(records[i]);
  if (cal.empty()) throw Error("cpu loop: no point is in the calibration subset");
  rep.fit = costmodel::calibrate(cal, device, {"layoutx measure --loop"});
  // 5. Predict every point; score the held-out ones, with the device's rules (the CPU has none).
  costmodel::OpLevelPredictor predictor(device, rep.fit.calibration, costmodel::load_device_rules(device));
  for (auto& row : rep.rows) {
    auto g = model::build_layer_graph(model.layer(row.point.type, row.point.ctx), row.point.variant);
    auto pr = predictor.predict(g);
    row.predicted_ms = pr.latency_ms;
    row.low_ms = pr.low_ms;
    row.high_ms = pr.high_ms;
    row.rel_error = (pr.latency_ms - row.measured_ms) / row.measured_ms;
    if (!row.point.calibrate) {
      ++rep.held_out;
      if (std::abs(row.rel_error) <= 0.10) ++rep.held_out_within_10pct;
    }
  }
  return rep;
}

}  // namespace layoutx::emit
