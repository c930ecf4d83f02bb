#include "model/analysis.h"

namespace layoutx::model {

int64_t tensor_bytes(const Shape& shape, DType dtype) {
  return (numel(shape) * dtype_bits(dtype) + 7) / 8;
}

bool is_folded_weight(const LayerGraph& g, Vertex v) {
  const OpNode& n = g.op(v);
  if (n.kind == OpKind::kWeight) return true;
  return n.kind == OpKind::kSlice && !g.operands(v).empty() && g.op(g.operands(v)[0]).kind == OpKind::kWeight;
}

OpNode folded_weight_node(const LayerGraph& g, Vertex v) {
  OpNode n = g.op(v);
  if (n.kind == OpKind::kSlice) {
    const OpNode& w = g.op(g.operands(v)[0]);
    n.kind = OpKind::kWeight;
    n.block = w.block;
    n.conv_layout = w.conv_layout;
  }
  return n;
}

int64_t node_bytes(const OpNode& n) {
  int64_t bytes = tensor_bytes(n.shape, n.dtype);
  if (n.kind == OpKind::kWeight && n.block > 0 && n.shape.size() == 2) {
    const int64_t blocks = (n.shape[0] + n.block - 1) / n.block;
    bytes += (blocks * n.shape[1] * 4 + 7) / 8;
  }
  if (n.kind == OpKind::kWeight && n.block > 0 && n.conv_layout && n.shape.size() == 4) {
    // [out, in, 1, 1]: the same blocks along the input channels, per output channel.
    const int64_t blocks = (n.shape[1] + n.block - 1) / n.block;
    bytes += (blocks * n.shape[0] * 4 + 7) / 8;
  }
  return bytes;
}

int64_t padded_numel(const Shape& shape, int pad) {
  if (shape.empty()) return 1;
  int64_t n = 1;
  for (size_t i = 0; i + 1 < shape.size(); ++i) n *= shape[i];
  const int64_t last = pad > 1 ? (shape.back() + pad - 1) / pad * pad : shape.back();
  return n * last;
}

double matmul_macs(const LayerGraph& g, Vertex v, int pad, double row_scale) {
  const Shape& a = g.op(g.operands(v)[0]).shape;
  if (g.op(v).kind == OpKind::kConv) {
    // 1x1 Conv [N, C, H, W] -> [N, O, H, W]: N H W rows of a [C] x [C, O] product; the output
    // channels are the padded axis, as a MatMul's last axis.
    const Shape& y = g.op(v).shape;
    const int64_t rows = numel(y) / y[1];
    return row_scale * static_cast<double>(padded_numel(Shape{rows, y[1]}, pad)) * static_cast<double>(a[1]);
  }
  return row_scale * static_cast<double>(padded_numel(g.op(v).shape, pad)) * static_cast<double>(a.back());
}

namespace {

OpStats stats_of(const LayerGraph& g, Vertex v) {
  const OpNode& n = g.op(v);
  OpStats s;
  const int64_t out_bytes = node_bytes(n);
  switch (n.kind) {
    case OpKind::kInput:
    case OpKind::kConstant:
      return s;  // data arrives; moving it is counted where it is read
    case OpKind::kWeight:
      s.weight_bytes = out_bytes;
      return s;
    case OpKind::kReshape:
      return s;  // a view: no data moves
    case OpKind::kSlice:
      // A part of a weight (heads=per_head's rows of a projection): a constant the converter
      // folds into a weight of its own; its reader counts its bytes.
      if (is_folded_weight(g, v)) return s;
      break;
    case OpKind::kMatMul:
    case OpKind::kConv: {
      s.macs = static_cast<int64_t>(matmul_macs(g, v));
      for (Vertex u : g.operands(v))
        if (is_folded_weight(g, u)) s.weight_bytes += node_bytes(folded_weight_node(g, u));
      break;
    }
    case OpKind::kOutput:
    case OpKind::kConvert:
    case OpKind::kRmsNorm:
    case OpKind::kLayerNorm:
    case OpKind::kTanh:
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kDiv:
    case OpKind::kNeg:
    case OpKind::kSigmoid:
    case OpKind::kExp:
    case OpKind::kGelu:
    case OpKind::kSoftmax:
    case OpKind::kReduceMax:
    case OpKind::kReduceSum:
    case OpKind::kConcat:
      break;
  }
  s.elements = numel(n.shape);
  s.bytes_read = operand_bytes(g, v, [](const OpNode& o) { return node_bytes(o); });
  s.bytes_written = out_bytes;
  return s;
}

}  // namespace

std::vector<OpStats> analyze(const LayerGraph& g) {
  std::vector<OpStats> stats(g.size());
  for (Vertex v : g.topological_order()) stats[v] = stats_of(g, v);
  return stats;
}

GraphTotals totals(const LayerGraph& g, const std::vector<OpStats>& stats) {
  GraphTotals t;
  for (Vertex v : g.topological_order()) {
    const OpNode& n = g.op(v);
    const OpStats& s = stats[v];
    t.macs += s.macs;
    t.elements += s.elements;
    t.bytes_read += s.bytes_read;
    t.bytes_written += s.bytes_written;
    if (n.kind == OpKind::kWeight) t.weight_bytes += s.weight_bytes;
    if (n.kind == OpKind::kInput) t.boundary_bytes_in += tensor_bytes(n.shape, n.dtype);
    if (n.kind == OpKind::kOutput) t.boundary_bytes_out += tensor_bytes(n.shape, n.dtype);
    if (n.kind != OpKind::kInput && n.kind != OpKind::kWeight && n.kind != OpKind::kConstant) ++t.op_count;
  }
  return t;
}

int64_t weight_and_boundary_bytes(const LayerGraph& g) {
  int64_t bytes = 0;
  for (Vertex v = 0; v < g.size(); ++v) {
    const OpNode& n = g.op(v);
    if (n.kind == OpKind::kWeight || n.kind == OpKind::kInput || n.kind == OpKind::kOutput) bytes += node_bytes(n);
  }
  return bytes;
}

}  // namespace layoutx::model
