// layoutx predict: predicted latency (ms, with an interval), roofline floor and converter
// legality of one layer variant, per lowered HTP op if asked.
#include <iostream>

#include "cli/layer_options.h"
#include "cli/predictor_options.h"
#include "cli/table.h"
#include "cli/verbs.h"
#include "costmodel/htp_predictor.h"
#include "model/builder.h"
#include "support/json_writer.h"

namespace layoutx::cli {

namespace {

struct PredictArgs {
  PredictorOptions predictor;
  LayerOptions layer;
  bool per_op = false;
  bool json = false;
};

void print_json(const model::LayerGraph& g, const costmodel::Prediction& p, bool per_op) {
  JsonWriter w(std::cout);
  w.begin_object();
  w.field("variant_key", g.variant.key());
  w.field("preset", g.variant.preset());
  w.field("layer", model::to_string(g.layer.type));
  w.field("ctx", g.layer.context);
  w.field("precision", model::to_string(g.variant.precision));
  w.field("latency_ms", p.latency_ms);
  w.key("interval_ms").value(std::vector<double>{p.low_ms, p.high_ms});
  w.field("floor_ms", p.floor_ms);
  w.field("ratio_to_floor", p.floor_ms > 0 ? p.latency_ms / p.floor_ms : 0.0);
  w.field("compiles", costmodel::to_string(p.legality.compiles));
  w.field("reasons", p.legality.reasons);
  w.field("calibration_id", p.calibration_id);
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
  w.end_object();
}

void print_table(const model::LayerGraph& g, const costmodel::Prediction& p, bool per_op) {
  std::cout << "variant      " << g.variant.key();
  if (!g.variant.preset().empty()) std::cout << "  (" << g.variant.preset() << ")";
  std::cout << "\nlayer        " << model::to_string(g.layer.type) << ", ctx " << g.layer.context << ", cache "
            << g.layer.cache_entries << " entries\n";
  std::cout << "latency      " << fmt(p.latency_ms, 3) << " ms  [" << fmt(p.low_ms, 3) << ", " << fmt(p.high_ms, 3)
            << "]\n";
  std::cout << "floor        " << fmt(p.floor_ms, 3) << " ms (bytes crossing DRAM at peak), prediction "
            << fmt(p.floor_ms > 0 ? p.latency_ms / p.floor_ms : 0.0, 2) << "x the floor\n";
  std::cout << "compiles     " << costmodel::to_string(p.legality.compiles) << "\n";
  for (const auto& r : p.legality.reasons) std::cout << "  " << r << "\n";
  std::cout << "calibration  " << p.calibration_id << "\n";
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
  sub->add_flag("--json", args->json, "print one JSON document");
  sub->callback([args] {
    // 1. Resolve the model, layer type and variant from the flags.
    auto r = args->layer.resolve();
    // 2. Build the op graph.
    auto g = model::build_layer_graph(r.layer, r.variant);
    // 3. The device's predictor: galaxy-s25 with its saved calibration (refit if stale).
    auto predictor = args->predictor.load();
    // 4. Predict: lower, price, interval, floor, legality.
    costmodel::Prediction p = predictor->predict(g);
    // 5. Print (compiles: no is reported, not an error: predict itself succeeded).
    if (args->json) print_json(g, p, args->per_op);
    else print_table(g, p, args->per_op);
  });
}

}  // namespace layoutx::cli
