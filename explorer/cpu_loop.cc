#include "explorer/cpu_loop.h"

#include <algorithm>
#include <cmath>

#include "costmodel/device_fit.h"
#include "costmodel/legality.h"
#include "costmodel/op_profile_shares.h"
#include "db/ingest.h"
#include "db/profile.h"
#include "model/builder.h"
#include "support/error.h"
#include "support/paths.h"

namespace layoutx::explorer {

using model::LayerType;

namespace {

// The op shares a CPU profile measures directly (ONNX Runtime times every node): the GELU's and
// the graph outputs' fraction of the summed node time, matched to the lowered ops as any per-op
// profile is (costmodel/op_profile_shares.h). They tell apart what the layer timings cannot see
// (the GELU is under 1% of a CPU layer; see the device's hypotheses).
std::vector<costmodel::MeasurementRecord> profile_shares(const costmodel::MeasurementRecord& layer,
                                                         const db::Profile& prof) {
  std::vector<costmodel::ProfiledOp> rows;
  rows.reserve(prof.ops.size());
  for (const db::OpRecord& op : prof.ops) rows.push_back({op.name, op.ms.value_or(0.0)});
  std::vector<costmodel::MeasurementRecord> out;
  for (costmodel::MeasurementRecord& r : costmodel::shares_from_op_profile(layer, rows, layer.id, layer.source, 0).shares) {
    const std::string cls = r.id.substr(r.id.rfind(':') + 1);
    if (cls != to_string(costmodel::OpClass::kGeluErf) && cls != to_string(costmodel::OpClass::kGeluTanh) &&
        cls != to_string(costmodel::OpClass::kOutput))
      continue;
    // Absolute sd: a node's time varies by about a tenth from run to run on a shared VM, so a
    // share's sd scales with it (a GELU's share is a fraction of a percent), with a small floor.
    r.sd = 0.1 * r.share + 1e-4;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

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
                        const costmodel::DeviceSpec& device, const PointRunner& run, db::Connection* conn, int passes) {
  if (passes < 1) throw Error("cpu loop: passes must be at least 1, got " + std::to_string(passes));
  LoopReport rep;
  rep.passes = passes;
  // Per point, over the passes: the layer times, the wall times and every node event (for shares).
  std::vector<std::vector<double>> layer_ms(points.size()), wall_ms(points.size());
  std::vector<db::Profile> nodes(points.size());
  std::vector<std::string> source(points.size());
  // Passes go round the whole set, so a slow spell of a shared machine lands on every point once
  // instead of on a run of neighbouring points.
  for (int pass = 0; pass < passes; ++pass)
    for (size_t i = 0; i < points.size(); ++i) {
      const LoopPoint& p = points[i];
      // 1. Run the variant (the runner emits it and times it).
      const PointRun res = run(model.layer(p.type, p.ctx), p.variant, static_cast<size_t>(pass) * points.size() + i);
      if (res.profile_path.empty()) throw Error("cpu loop: ONNX Runtime wrote no profile for " + p.variant.key());
      // 2. The layer time: median over timed runs of the summed node kernel times (what the
      //    ingester stores as the ort_node boundary).
      const std::string text = read_text_file(res.profile_path);  // read once: parsed here, ingested below
      auto prof = db::parse_ort_json(text, res.profile_path);
      layer_ms[i].push_back(prof.layers.at(0).ms);
      wall_ms[i].insert(wall_ms[i].end(), res.wall_ms.begin(), res.wall_ms.end());
      nodes[i].ops.insert(nodes[i].ops.end(), prof.ops.begin(), prof.ops.end());
      source[i] = res.profile_path;
      // 3. Into the database as the device (every pass: each is a timing of the graph).
      if (conn) {
        db::IngestContext ctx;
        ctx.device = device.name;
        ctx.variant = p.variant.key();
        ctx.layer = model::to_string(p.type);
        ctx.ctx = p.ctx;
        ctx.model = model.name;
        ctx.format = db::Format::kOrtJson;
        ctx.notes = "layoutx measure --loop: " + res.runtime + ", pass " + std::to_string(pass + 1) + " of " +
                    std::to_string(passes) + ", wall median " + std::to_string(db::median(res.wall_ms)) + " ms";
        db::ingest_text(*conn, text, res.profile_path, ctx);
      }
    }
  std::vector<costmodel::MeasurementRecord> records, shares;
  for (size_t i = 0; i < points.size(); ++i) {
    const LoopPoint& p = points[i];
    LoopRow row;
    row.point = p;
    row.measured_ms = db::median(layer_ms[i]);  // the median pass
    row.wall_ms = db::median(wall_ms[i]);
    const auto [lo, hi] = std::minmax_element(layer_ms[i].begin(), layer_ms[i].end());
    row.spread = row.measured_ms > 0 ? (*hi - *lo) / row.measured_ms : 0.0;
    costmodel::MeasurementRecord r;
    r.kind = costmodel::MeasurementRecord::Kind::kLayerTime;
    r.id = std::string(model::to_string(p.type)) + "-" + std::to_string(p.ctx) + "-" + p.variant.key();
    r.source = source[i];
    r.model = model_arg;
    r.layer = p.type;
    r.context = p.ctx;
    r.variant = p.variant;
    r.ms = row.measured_ms;
    // Relative sd: repeated ORT runs on a shared VM vary by a few percent; with several passes,
    // at least half the spread the passes showed.
    r.sd = std::max(0.05, 0.5 * row.spread);
    records.push_back(r);
    rep.rows.push_back(row);
    // The calibration points' profiles also give op shares (held-out points stay unseen).
    if (p.calibrate)
      for (auto& share : profile_shares(r, nodes[i]))
        shares.push_back(std::move(share));
  }
  // 4. Calibrate on the subset: its timings and its profiles' shares.
  std::vector<costmodel::MeasurementRecord> cal;
  for (size_t i = 0; i < points.size(); ++i)
    if (points[i].calibrate) cal.push_back(records[i]);
  rep.shares = static_cast<int>(shares.size());
  cal.insert(cal.end(), shares.begin(), shares.end());
  if (cal.empty()) throw Error("cpu loop: no point is in the calibration subset");
  const std::vector<std::string> provenance = {"layoutx measure --loop"};
  // 5. The predictor (costmodel/device_fit.h): the device's hypotheses each fitted on the subset
  //    and combined by weight, or the one fit; with the device's rules (the CPU has none).
  costmodel::DeviceFit fit = costmodel::fit_device(cal, device, provenance);
  rep.fit = std::move(fit.single);
  if (fit.hypotheses)
    for (const costmodel::HypothesisFit& f : fit.hypotheses->fits)
      rep.hypotheses.push_back({f.spec.name, f.weight, f.elpd, f.report.calibration.loo_median});
  const std::unique_ptr<costmodel::Predictor> predictor = std::move(fit.predictor);
  rep.predictor_id = predictor->calibration_id();
  // 6. Predict every point; score the held-out ones.
  for (auto& row : rep.rows) {
    auto g = model::build_layer_graph(model.layer(row.point.type, row.point.ctx), row.point.variant);
    auto pr = predictor->predict(g);
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

}  // namespace layoutx::explorer
