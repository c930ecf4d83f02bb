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
