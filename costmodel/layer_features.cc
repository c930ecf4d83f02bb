#include "costmodel/layer_features.h"

#include <algorithm>
#include <utility>

#include "costmodel/cost_model.h"
#include "costmodel/live_set.h"
#include "model/analysis.h"
#include "model/builder.h"

namespace layoutx::costmodel {

namespace {

bool is_explicit_softmax_op(const LoweredOp& op) {
  return op.name.rfind("attn/softmax/", 0) == 0 && op.op_class == OpClass::kElementwise;
}

// The converter folding max/sub/exp/sum/div into one Softmax: the run of explicit softmax ops
// becomes one op of class softmax that executes all their vertices.
void fuse_explicit_softmax(std::vector<LoweredOp>& ops) {
  // In place: ops[0, kept) are the result so far (no second vector: this runs for every graph
  // with an explicit softmax that the explorer prices).
  size_t kept = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    LoweredOp& op = ops[i];
    if (is_explicit_softmax_op(op) && kept > 0 && ops[kept - 1].op_class == OpClass::kSoftmax &&
        ops[kept - 1].name.rfind("attn/softmax/", 0) == 0) {
      ops[kept - 1].vertices.insert(ops[kept - 1].vertices.end(), op.vertices.begin(), op.vertices.end());
      continue;
    }
    if (is_explicit_softmax_op(op)) op.op_class = OpClass::kSoftmax;
    if (kept != i) ops[kept] = std::move(op);
    ++kept;
  }
  ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(kept), ops.end());
}

// The cache-sized graph inputs an op other than a copy reads directly, each with its readers
// (through views).
std::vector<std::pair<model::Vertex, std::vector<model::Vertex>>> cache_inputs_and_readers(const model::LayerGraph& g,
                                                                                           int channel_pad,
                                                                                           double live_min_kb) {
  std::vector<std::pair<model::Vertex, std::vector<model::Vertex>>> out;
  for (model::Vertex in : g.of_kind(model::OpKind::kInput)) {
    const model::OpNode& n = g.op(in);
    if (static_cast<double>(tiled_bytes(n.shape, n.dtype, channel_pad, false)) < live_min_kb * 1024) continue;
    std::vector<model::Vertex> rs;
    readers_through_views(g, in, rs);
    if (std::any_of(rs.begin(), rs.end(), [&](model::Vertex u) { return !is_copy(g.op(u).kind); }))
      out.emplace_back(in, std::move(rs));
  }
  return out;
}

// Structure::relayout_cache_inputs: one data-movement op per cache input read in place, placed
// before the first op that reads it; it reads the flat tensor and writes the tiled one. Returns
// the inputs re-laid.
std::vector<model::Vertex> add_cache_relayouts(const model::LayerGraph& g, const DeviceSpec& device,
                                               LayerFeatures& f) {
  std::vector<model::Vertex> relaid;
  for (const auto& [in, rs] : cache_inputs_and_readers(g, device.channel_pad, device.structure.live_min_kb())) {
    relaid.push_back(in);
    size_t at = f.ops.size();
    for (size_t i = 0; i < f.ops.size() && at == f.ops.size(); ++i)
      for (model::Vertex v : f.ops[i].vertices)
        if (std::find(rs.begin(), rs.end(), v) != rs.end()) at = i;
    const model::OpNode& n = g.op(in);
    OpFeatures of;
    of.op_class = OpClass::kDataMovement;
    of.precision = f.precision;
    of.count = 1;
    of.bytes = 2.0 * static_cast<double>(tiled_bytes(n.shape, n.dtype, device.channel_pad, false));
    const auto pos = static_cast<std::ptrdiff_t>(at);
    f.ops.insert(f.ops.begin() + pos, LoweredOp{n.name + "/relayout", model::OpKind::kInput, OpClass::kDataMovement, {in}});
    f.op_features.insert(f.op_features.begin() + pos, of);
  }
  return relaid;
}

// A MatMul that reads its second operand transposed (k_layout=rows: QNN MatMul's transpose_in1)
// gets one data-movement op before it that reads that operand and writes it transposed: the
// exporters store K as [kv, head_dim, cache] so that the scores MatMul needs no transpose
// (htp-facts.md, static_llama.py); priced as a copy of its bytes, not measured on this device.
void add_operand_transposes(const model::LayerGraph& g, int channel_pad, LayerFeatures& f) {
  for (size_t i = 0; i < f.ops.size(); ++i) {
    if (f.ops[i].op_class != OpClass::kMatMulAct) continue;
    const model::Vertex v = f.ops[i].vertices.front();
    if (!g.op(v).transpose_b) continue;
    const model::OpNode& b = g.op(g.operands(v)[1]);
    OpFeatures of;
    of.op_class = OpClass::kDataMovement;
    of.precision = f.precision;
    of.count = f.op_features[i].count;  // the MatMul's own dispatch share (a per-head chain's)
    of.bytes = 2.0 * static_cast<double>(tiled_bytes(b.shape, b.dtype, channel_pad, false));
    const auto pos = static_cast<std::ptrdiff_t>(i);
    f.ops.insert(f.ops.begin() + pos, LoweredOp{f.ops[i].name + "/transpose_b", model::OpKind::kMatMul,
                                                OpClass::kDataMovement, {v}});
    f.op_features.insert(f.op_features.begin() + pos, of);
    ++i;  // past the MatMul
  }
}

}  // namespace

std::vector<model::Vertex> cache_inputs_read_in_place(const model::LayerGraph& g, int channel_pad, double live_min_kb) {
  std::vector<model::Vertex> out;
  for (const auto& [in, rs] : cache_inputs_and_readers(g, channel_pad, live_min_kb)) out.push_back(in);
  return out;
}

LayerFeatures featurize_ops(const model::LayerGraph& g, const DeviceSpec& device) {
  return featurize_ops(g, device, lower(g));
}

LayerFeatures featurize_ops(const model::LayerGraph& g, const DeviceSpec& device, std::vector<LoweredOp> lowered) {
  const Structure& s = device.structure;
  LayerFeatures f;
  f.precision = g.variant.precision();
  f.ops = std::move(lowered);
  if (s.fuse_explicit_softmax()) fuse_explicit_softmax(f.ops);
  f.op_features.reserve(f.ops.size());
  for (const LoweredOp& op : f.ops) {
    f.op_features.push_back(features(g, op, device.channel_pad, s));
    if (op.op_class == OpClass::kSoftmax && op.vertices.size() > 1) {
      // A folded softmax reads its input once and writes its output once, like the fused op.
      const model::OpNode& in = g.op(g.operands(op.vertices.front())[0]);
      const model::OpNode& out = g.op(op.vertices.back());
      f.op_features.back().bytes = static_cast<double>(tiled_bytes(in.shape, in.dtype, device.channel_pad, false) +
                                                       tiled_bytes(out.shape, out.dtype, device.channel_pad, false));
    }
  }
  for (size_t i = 0; i < f.ops.size(); ++i)
    if (f.ops[i].op_class == OpClass::kMatMulWeight)
      for (model::Vertex v : f.ops[i].vertices)
        for (model::Vertex u : g.operands(v))
          if (model::is_folded_weight(g, u))
            f.weight_bytes += static_cast<double>(
                weight_bytes(model::folded_weight_node(g, u), s, g.op(v).kind == model::OpKind::kConv));
  add_operand_transposes(g, device.channel_pad, f);
  return f;
}

void finish_layer_features(LayerFeatures& f, const model::LayerGraph& g, const DeviceSpec& device, LivePeakMemo* memo) {
  const Structure& s = device.structure;
  // Under relayout_cache_inputs the re-laid copies are cache-sized tensors of the live set too.
  std::vector<model::Vertex> relaid;
  if (s.relayout_cache_inputs()) relaid = add_cache_relayouts(g, device, f);
  if (s.vtcm_budget_mb() > 0) {
    const auto min_bytes = static_cast<int64_t>(s.live_min_kb() * 1024);
    const LivePeakMemo::Entry* known = nullptr;
    if (memo)
      for (const LivePeakMemo::Entry& e : memo->entries)
        if (e.graph == &g && e.channel_pad == device.channel_pad && e.min_bytes == min_bytes && e.relaid == relaid)
          known = &e;
    int64_t peak = 0;
    if (known) {
      peak = known->peak_bytes;
    } else {
      peak = live_set(g, device.channel_pad, min_bytes, relaid).peak_bytes;
      if (memo) memo->entries.push_back({&g, device.channel_pad, min_bytes, relaid, peak});
    }
    f.peak_live_bytes = static_cast<double>(peak);
    apply_vtcm_budget(f, s.vtcm_budget_mb());
  }
}

bool priced_as_grouped(const model::LayerGraph& g, const Structure& s) {
  return s.head_chains_at_once() == 0 && g.variant.heads() == model::HeadsForm::kPerHead;
}

model::LayerGraph grouped_twin(const model::LayerGraph& g) {
  model::Variant v = g.variant;
  v.set(model::HeadsForm::kGrouped);
  return model::build_layer_graph(g.layer, v);
}

LayerFeatures featurize_layer(const model::LayerGraph& g, const DeviceSpec& device) {
  if (priced_as_grouped(g, device.structure)) return featurize_layer(grouped_twin(g), device);
  LayerFeatures f = featurize_ops(g, device);
  finish_layer_features(f, g, device);
  return f;
}

double spill_bytes(const LayerFeatures& f, double budget_mb) {
  return budget_mb > 0 ? std::max(0.0, f.peak_live_bytes - budget_mb * 1024 * 1024) : 0.0;
}

void apply_vtcm_budget(LayerFeatures& f, double budget_mb) {
  f.spill_bytes = spill_bytes(f, budget_mb);
  f.stall_weight_bytes = f.spill_bytes > 0 ? f.weight_bytes : 0.0;
}

void add_graph_design_row(const DeviceSpec& device, const LayerFeatures& f, Eigen::VectorXd& row) {
  auto put = [&](Term t, double value) {
    const int i = device.graph_index(t, f.precision);
    if (i >= 0) row[i] += value;
  };
  put(Term::kGraph, f.graphs);
  put(Term::kSpill, f.spill_bytes / 1e6);
  put(Term::kStall, f.stall_weight_bytes / 1e6);
}

void add_layer_design_row(const DeviceSpec& device, const LayerFeatures& f, Eigen::VectorXd& row) {
  for (const OpFeatures& of : f.op_features) add_design_row(device, of, row);
  add_graph_design_row(device, f, row);
}

Eigen::VectorXd layer_design_row(const DeviceSpec& device, const LayerFeatures& f) {
  Eigen::VectorXd row = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(device.coefficients.size()));
  add_layer_design_row(device, f, row);
  return row;
}

}  // namespace layoutx::costmodel
