// Graph analyses: side tables keyed by vertex id (XLA HloCostAnalysis style). One function
// holds each op kind's bytes and MACs.
#pragma once
#include <cstdint>
#include <vector>

#include "model/graph.h"

namespace layoutx::model {

// Per-op figures for one decode step.
struct OpStats {
  int64_t macs = 0;           // multiply-accumulates of a contraction (MatMul: batch*M*N*K); 0 otherwise
  int64_t elements = 0;       // output elements computed (0 for views, inputs, weights, constants)
  int64_t bytes_read = 0;     // operand bytes the op reads (a MatMul's weight operand included)
  int64_t bytes_written = 0;  // bytes the op writes (Reshape: 0, a view; Output: its copy across the boundary)
  int64_t weight_bytes = 0;   // bytes of the op's weight operands (packed: 4-bit = half a byte)
};

// Bytes of a tensor of `shape` and `dtype` (4-bit rounded up to whole bytes).
int64_t tensor_bytes(const Shape& shape, DType dtype);
// A node's stored bytes: tensor_bytes, plus for a block-quantized 4-bit weight [in, out]
// (OpNode::block > 0) one 4-bit integer scale per block and output column:
// ceil(in / block) * out * 4 bits (the per-channel float scales, as for per-channel weights,
// are not counted).
int64_t node_bytes(const OpNode& n);

// A weight as the converter sees it: a Weight, or a Slice of one (heads=per_head's rows of a
// projection), which the converter folds into a static tensor of its own. Not an op on the device.
bool is_folded_weight(const LayerGraph& g, Vertex v);
// That weight as one node: the Weight itself, or the slice with the Weight's kind and quantization
// (block, conv layout), so node_bytes and the cost model's weight bytes read it as a weight.
OpNode folded_weight_node(const LayerGraph& g, Vertex v);

// Elements of `shape` with its last axis rounded up to a multiple of `pad` (pad <= 1: numel).
int64_t padded_numel(const Shape& shape, int pad);

// The one MACs formula (this file's analysis and the cost model's features both use it): a
// MatMul vertex's output elements (last axis padded to `pad`) x its contraction length (the
// last axis of its first operand), times `row_scale` (a weight projection's rows padded to the
// matrix unit's tile height, costmodel/features.h). A 1x1 Conv (projection=conv1x1) counts as
// the MatMul it is: N H W rows, output channels padded, input channels contracted. Exact for
// products below 2^53.
double matmul_macs(const LayerGraph& g, Vertex v, int pad = 1, double row_scale = 1.0);

// The one operand-bytes rule: the sum of bytes_of(operand node) over v's operands that move
// data (a Constant is a scalar folded into the op and moves none). bytes_of returns int64_t.
template <typename BytesOf>
int64_t operand_bytes(const LayerGraph& g, Vertex v, BytesOf bytes_of) {
  int64_t b = 0;
  for (Vertex u : g.operands(v)) {
    const OpNode& o = g.op(u);
    if (o.kind == OpKind::kConstant) continue;
    b += bytes_of(o);
  }
  return b;
}

struct GraphTotals {
  int64_t macs = 0;
  int64_t elements = 0;
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  int64_t weight_bytes = 0;        // all Weight tensors
  int64_t boundary_bytes_in = 0;   // Input tensors: what the runtime hands the graph per token
  int64_t boundary_bytes_out = 0;  // Output tensors: what the graph hands back per token
  int op_count = 0;                // compute and data-movement ops (not Input/Weight/Constant)
};

// Side table: stats[v] for every vertex v.
std::vector<OpStats> analyze(const LayerGraph& g);
GraphTotals totals(const LayerGraph& g, const std::vector<OpStats>& stats);
// weight_bytes + boundary_bytes_in + boundary_bytes_out of totals(g, analyze(g)), without the
// per-op analysis: the bytes a roofline floor moves (every weight once, the boundary tensors).
int64_t weight_and_boundary_bytes(const LayerGraph& g);

}  // namespace layoutx::model
