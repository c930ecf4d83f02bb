#include "costmodel/features.h"

#include <algorithm>

#include "model/analysis.h"

namespace layoutx::costmodel {

int64_t tiled_bytes(const model::Shape& shape, model::DType dtype, int channel_pad, bool is_weight) {
  const bool sixteen_bit_activation = !is_weight && (dtype == model::DType::kF16 || dtype == model::DType::kU16);
  if (!sixteen_bit_activation || shape.empty() || channel_pad <= 1) return model::tensor_bytes(shape, dtype);
  return (model::padded_numel(shape, channel_pad) * model::dtype_bits(dtype) + 7) / 8;
}

int64_t weight_bytes(const model::OpNode& w, const Structure& s, bool conv) {
  // Expanded 4-bit weights reach the matrix unit as 8-bit ones: the bytes it consumes.
  if (w.dtype == model::DType::kI4 && s.w4_expanded(w.block, conv)) return model::tensor_bytes(w.shape, model::DType::kI8);
  return model::node_bytes(w);  // packed: 4 bits a weight, plus a block-quantized weight's block scales
}

OpFeatures features(const model::LayerGraph& g, const LoweredOp& op, int channel_pad, const Structure& s) {
  OpFeatures f;
  f.op_class = op.op_class;
  f.precision = g.variant.precision();
  f.count = 1;
  // An op of one of several independent per-head chains: with k chains at once, its dispatch is
  // shared with the k - 1 running beside it.
  if (const int chains = g.op(op.vertices.front()).chains; chains > 1 && s.head_chains_at_once() > 1)
    f.count = 1.0 / std::min(chains, s.head_chains_at_once());
  for (model::Vertex v : op.vertices) {
    const model::OpNode& n = g.op(v);
    // The operand-bytes rule (model::operand_bytes: a Constant moves nothing), with a folded
    // weight (a Weight, or a slice of one) read as the weight it is.
    for (model::Vertex u : g.operands(v)) {
      const model::OpNode& o = g.op(u);
      if (o.kind == model::OpKind::kConstant) continue;
      f.bytes += static_cast<double>(model::is_folded_weight(g, u) ? weight_bytes(model::folded_weight_node(g, u), s,
                                                                                  n.kind == model::OpKind::kConv)
                                                                    : tiled_bytes(o.shape, o.dtype, channel_pad, false));
    }
    const int64_t out_bytes = tiled_bytes(n.shape, n.dtype, channel_pad, false);
    f.bytes += static_cast<double>(out_bytes);
    if (n.kind == model::OpKind::kMatMul) {
      double m_pad = 1;  // a weight projection's rows padded to the tile height
      if (op.op_class == OpClass::kMatMulWeight && n.shape.size() >= 2 && s.hmx_tile_rows() > 1) {
        const int64_t m = n.shape[n.shape.size() - 2];
        m_pad = static_cast<double>((m + s.hmx_tile_rows() - 1) / s.hmx_tile_rows() * s.hmx_tile_rows()) / static_cast<double>(m);
      }
      f.macs += model::matmul_macs(g, v, channel_pad, m_pad);
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
