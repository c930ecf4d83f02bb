#include "costmodel/features.h"

#include "model/analysis.h"

namespace layoutx::costmodel {

namespace {

// Elements of `shape` with its last axis rounded up to a multiple of `pad` (no copy of the shape).
int64_t padded_numel(const model::Shape& shape, int pad) {
  if (shape.empty()) return 1;
  int64_t n = 1;
  for (size_t i = 0; i + 1 < shape.size(); ++i) n *= shape[i];
  const int64_t last = pad > 1 ? (shape.back() + pad - 1) / pad * pad : shape.back();
  return n * last;
}

}  // namespace

int64_t tiled_bytes(const model::Shape& shape, model::DType dtype, int channel_pad, bool is_weight) {
  const bool sixteen_bit_activation = !is_weight && (dtype == model::DType::kF16 || dtype == model::DType::kU16);
  if (!sixteen_bit_activation || shape.empty() || channel_pad <= 1) return model::tensor_bytes(shape, dtype);
  return (padded_numel(shape, channel_pad) * model::dtype_bits(dtype) + 7) / 8;
}

OpFeatures features(const model::LayerGraph& g, const LoweredOp& op, int channel_pad, const Structure& s) {
  OpFeatures f;
  f.op_class = op.op_class;
  f.precision = g.variant.precision();
  f.count = 1;
  for (model::Vertex v : op.vertices) {
    const model::OpNode& n = g.op(v);
    for (model::Vertex u : g.operands(v)) {
      const model::OpNode& o = g.op(u);
      if (o.kind == model::OpKind::kConstant) continue;  // a scalar folded into the op
      const bool weight = o.kind == model::OpKind::kWeight;
      // Expanded 4-bit weights reach the matrix unit as 8-bit ones: the bytes it consumes.
      const model::DType dt = weight && o.dtype == model::DType::kI4 && s.w4_weights == W4Weights::kExpanded
                                  ? model::DType::kI8
                                  : o.dtype;
      f.bytes += static_cast<double>(tiled_bytes(o.shape, dt, channel_pad, weight));
    }
    const int64_t out_bytes = tiled_bytes(n.shape, n.dtype, channel_pad, false);
    f.bytes += static_cast<double>(out_bytes);
    if (n.kind == model::OpKind::kMatMul) {
      const model::Shape& a = g.op(g.operands(v)[0]).shape;
      double m_pad = 1;  // a weight projection's rows padded to the tile height
      if (op.op_class == OpClass::kMatMulWeight && n.shape.size() >= 2 && s.hmx_tile_rows > 1) {
        const int64_t m = n.shape[n.shape.size() - 2];
        m_pad = static_cast<double>((m + s.hmx_tile_rows - 1) / s.hmx_tile_rows * s.hmx_tile_rows) / static_cast<double>(m);
      }
      f.macs += m_pad * static_cast<double>(padded_numel(n.shape, channel_pad)) * static_cast<double>(a.back());
    }
  }
  return f;
}

std::vector<OpFeatures> features(const model::LayerGraph& g, const std::vector<LoweredOp>& ops, int channel_pad,
                                 const Structure& s) {
  std::vector<OpFeatures> out;
  out.reserve(ops.size());
  for (const LoweredOp& op : ops) out.push_back(features(g, op, channel_pad, s));
  return out;
}

}  // namespace layoutx::costmodel
