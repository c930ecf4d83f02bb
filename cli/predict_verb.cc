// layoutx predict: predicted latency (ms, with an interval), roofline floor and converter
// legality of one layer variant, per lowered HTP op if asked.
#include <iostream>
#include <optional>

#include "model/design_space.h"
#include "cli/layer_options.h"
#include "cli/predictor_options.h"
#include "cli/table.h"
#include "cli/json_flag.h"
#include "cli/verbs.h"
#include "costmodel/mixture.h"
#include "explorer/open_decisions.h"
#include "model/builder.h"
#include "model/design_space.h"
#include "support/error.h"
#include "support/json_writer.h"

namespace layoutx::cli {

namespace {

struct PredictArgs {
  PredictorOptions predictor;
  LayerOptions layer;
  bool per_op = false;
  bool json = false;
  bool hypotheses = false;  // --hypotheses: each hypothesis's figure and weight
};

using Figures = std::vector<costmodel::HypothesisFigure>;
using Timings = std::vector<costmodel::MeasurementRecord>;

// The device's timings of this very graph (its measurement file and --db's): the prediction's
// error where the answer is known.
Timings timings_of(const model::LayerGraph& g, const model::ModelSpec& m, const Timings& all) {
  const std::string key = explorer::graph_key(g.layer, g.variant);
  Timings out;
  for (const auto& r : all)
    if (explorer::timed_graph_key(r, m) == key) out.push_back(r);
  return out;
}

double error_pct(const costmodel::Prediction& p, const costmodel::MeasurementRecord& r) {
  return 100.0 * (p.latency_ms - r.ms) / r.ms;
}

void print_json(const model::LayerGraph& g, const costmodel::Prediction& p, bool per_op, const std::string& device,
                const std::string& source, const Figures* each, const Timings& measured) {
  JsonWriter w(std::cout);
  w.begin_object();
  w.field("variant_key", g.variant.key(model::AxisScope(g.layer)));
  w.field("preset", g.variant.preset(model::AxisScope(g.layer)));
  w.field("layer", model::to_string(g.layer.type));
  w.field("ctx", g.layer.context);
  w.field("precision", model::to_string(g.variant.precision()));
  w.field("latency_ms", p.latency_ms);
  w.key("interval_ms").value(std::vector<double>{p.low_ms, p.high_ms});
  w.field("floor_ms", p.floor_ms);
  w.field("ratio_to_floor", p.floor_ms > 0 ? p.latency_ms / p.floor_ms : 0.0);
  w.field("compiles", costmodel::to_string(p.legality.compiles));
  w.field("reasons", p.legality.reasons);
  w.field("device", device);
  w.field("calibration_id", p.calibration_id);
  w.field("calibration_source", source);
  w.key("measured").begin_array();
  for (const auto& r : measured) {
    w.begin_object();
    w.field("id", r.id);
    w.field("ms", r.ms);
    w.field("source", r.source);
    w.field("prediction_error_pct", error_pct(p, r));
    w.end_object();
  }
  w.end_array();
  if (per_op) {
    w.key("ops").begin_array();
    for (const auto& op : p.ops) {
      w.begin_object();
      w.field("name", op.name);
      w.field("kind", op.kind);
      w.field("class", op.op_class);
      w.field("ms", op.ms);
      w.end_object();
    }
    w.end_array();
  }
  if (each) {
    w.key("hypotheses").begin_array();
    for (const auto& f : *each) {
      w.begin_object();
      w.field("name", f.name);
      w.field("weight", f.weight);
      w.field("latency_ms", f.prediction.latency_ms);
      w.key("interval_ms").value(std::vector<double>{f.prediction.low_ms, f.prediction.high_ms});
      w.field("calibration_id", f.prediction.calibration_id);
      w.end_object();
    }
    w.end_array();
  }
  w.end_object();
}

void print_hypotheses(const Figures& each) {
  std::cout << "\nhypotheses (those holding " << fmt(100 * costmodel::kPredictorWeightMass, 0)
            << "% of the weight; `layoutx calibrate` lists all):\n";
  Table t({"hypothesis", "weight", "ms", "interval"});
  for (const auto& f : each)
    t.add({f.name, fmt(f.weight, 3), fmt(f.prediction.latency_ms, 3),
           "[" + fmt(f.prediction.low_ms, 3) + ", " + fmt(f.prediction.high_ms, 3) + "]"});
  t.print(std::cout);
}

void print_table(const model::LayerGraph& g, const costmodel::Prediction& p, bool per_op, const std::string& device,
                 const std::string& source, const Timings& measured) {
  std::cout << "variant      " << g.variant.key(model::AxisScope(g.layer));
  if (!g.variant.preset(model::AxisScope(g.layer)).empty()) std::cout << "  (" << g.variant.preset(model::AxisScope(g.layer)) << ")";
  std::cout << "\nlayer        " << model::to_string(g.layer.type) << ", ctx " << g.layer.context << ", cache "
            << g.layer.cache_entries << " entries\n";
  std::cout << "latency      " << fmt(p.latency_ms, 3) << " ms  [" << fmt(p.low_ms, 3) << ", " << fmt(p.high_ms, 3)
            << "]\n";
  for (const auto& r : measured)
    std::cout << "measured     " << fmt(r.ms, 3) << " ms on the device (" << r.id << ", " << r.source
              << "): prediction " << (error_pct(p, r) >= 0 ? "+" : "") << fmt(error_pct(p, r), 1) << "%\n";
  std::cout << "floor        " << fmt(p.floor_ms, 3) << " ms (bytes crossing DRAM at peak), prediction "
            << fmt(p.floor_ms > 0 ? p.latency_ms / p.floor_ms : 0.0, 2) << "x the floor\n";
  std::cout << "compiles     " << costmodel::to_string(p.legality.compiles) << "\n";
  for (const auto& r : p.legality.reasons) std::cout << "  " << r << "\n";
  std::cout << "device       " << device << "\n";
  std::cout << "calibration  " << p.calibration_id << " (" << source << ")\n";
  if (!per_op) return;
  std::cout << "\n";
  Table t({"op", "kind", "class", "ms", "share"});
  for (const auto& op : p.ops)
    t.add({op.name, op.kind, op.op_class, fmt(op.ms, 4), fmt(100.0 * op.ms / p.latency_ms, 1) + "%"});
  t.print(std::cout);
}

}  // namespace

void add_predict_verb(CLI::App& app) {
  auto args = std::make_shared<PredictArgs>();
  auto* sub = app.add_subcommand("predict", "predicted latency (ms, interval), roofline floor and legality of one variant");
  args->layer.add_to(*sub, model::limits::kMaxContext);
  args->predictor.add_to(*sub);
  sub->add_flag("--per-op", args->per_op, "list the cost of every lowered HTP op");
  sub->add_flag("--hypotheses", args->hypotheses, "also each hypothesis of the device: its figure and weight");
  sub->callback([args, sub] {
    args->json = json_requested(*sub);  // the one --json (cli/json_flag.h)
    // 1. Resolve the model, layer type and variant from the flags.
    auto r = args->layer.resolve();
    model::design_space().require_priced(r.variant, "predict");
    // 2. Build the op graph.
    auto g = model::build_layer_graph(r.layer, r.variant);
    // 3. The device's predictor: --calibration FILE, --db's latest, or the shipped calibration.
    auto predictor = args->predictor.load();
    // 4. Predict: lower, price, interval, floor, legality.
    costmodel::Prediction p = predictor->predict(g);
    // 5. Print (compiles: no is reported, not an error: predict itself succeeded).
    std::optional<Figures> each;
    if (args->hypotheses) {
      if (predictor->hypothesis_count() == 0)
        throw Error("--hypotheses: the cost model of '" + predictor->device() + "' carries no hypotheses");
      each = predictor->predict_each(g);
    }
    const Timings measured = timings_of(g, r.model, args->predictor.device_timings());
    if (args->json)
      print_json(g, p, args->per_op, predictor->device(), args->predictor.source, each ? &*each : nullptr, measured);
    else {
      print_table(g, p, args->per_op, predictor->device(), args->predictor.source, measured);
      if (each) print_hypotheses(*each);
    }
  });
}

}  // namespace layoutx::cli
