#include "costmodel/features.h"

#include "model/analysis.h"

namespace layoutx::costmodel {

int64_t tiled_bytes(const model::Shape& shape, model::DType dtype, int channel_pad, bool is_weight) {
  const bool sixteen_bit_activation = !is_weight && (dtype == model::DType::kF16 || dtype == model::DType::kU16);
  if (!sixteen_bit_activation || shape.empty() || channel_pad <= 1) return model::tensor_bytes(shape, dtype);
  model::Shape padded = shape;
  padded.back() = (padded.back() + channel_pad - 1) / channel_pad * channel_pad;
  return model::tensor_bytes(padded, dtype);
}

OpFeatures features(const model::LayerGraph& g, const LoweredOp& op, int channel_pad) {
  OpFeatures f;
  f.op_class = op.op_class;
  f.precision = g.variant.precision;
  f.count = 1;
  for (model::Vertex v : op.vertices) {
    const model::OpNode& n = g.op(v);
    for (model::Vertex u : g.operands(v)) {
      const model::OpNode& o = g.op(u);
      if (o.kind == model::OpKind::kConstant) continue;  // a scalar folded into the op
      f.bytes += static_cast<double>(tiled_bytes(o.shape, o.dtype, channel_pad, o.kind == model::OpKind::kWeight));
    }
    const int64_t out_bytes = tiled_bytes(n.shape, n.dtype, channel_pad, false);
    f.bytes += static_cast<double>(out_bytes);
    if (n.kind == model::OpKind::kMatMul) {
      const model::Shape& a = g.op(g.operands(v)[0]).shape;
      model::Shape padded = n.shape;
      if (channel_pad > 1) padded.back() = (padded.back() + channel_pad - 1) / channel_pad * channel_pad;
      f.macs += static_cast<double>(model::numel(padded)) * static_cast<double>(a.back());
    }
  }
  return f;
}

std::vector<OpFeatures> features(const model::LayerGraph& g, const std::vector<LoweredOp>& ops, int channel_pad) {
  std::vector<OpFeatures> out;
  out.reserve(ops.size());
  for (const LoweredOp& op : ops) out.push_back(features(g, op, channel_pad));
  return out;
}

}  // namespace layoutx::costmodel
