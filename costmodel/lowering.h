// Lowering: a layer graph -> the ops the HTP runs (design.md, "The cost model").
//   - Input / Weight / Constant are not ops (data that arrives; a scalar Constant is folded
//     into the op that uses it); Reshape is a view and moves no data: neither is lowered.
//   - Softmax (fused form) is one op; the explicit form is its five elementwise ops.
//   - Convert ops are the boundary conversions of a quantized graph (f16 <-> u16).
//   - Concat / Slice are data movement; Output copies a tensor across the graph boundary.
//   - MatMul with a Weight operand is a weight-streaming projection; MatMul of two
//     activations (attention) is a different class.
//   - GELU erf and tanh are different classes: which is slower is the calibration's finding.
#pragma once
#include <boost/container/small_vector.hpp>

#include <string>
#include <vector>

#include "costmodel/op_class.h"
#include "model/graph.h"

namespace layoutx::costmodel {

struct LoweredOp {
  std::string name;                     // the graph op's name (a fused group: its first op)
  model::OpKind kind;                   // the graph op's kind
  OpClass op_class;                     // cost class
  // Graph ops this HTP op executes: one unless fused (an explicit softmax folds five). Inline
  // storage: lowering runs for every graph the explorer prices, and a heap vector per op was a
  // tenth of a sweep's allocations.
  boost::container::small_vector<model::Vertex, 5> vertices;
};

// The op's kind as reports name it: the graph op's kind, or "Relayout" for the re-layout a
// structure inserts before a cache input is read (a data-movement op on an Input vertex), or
// "Transpose" for the copy before a MatMul that reads its second operand transposed (a
// data-movement op on the MatMul's vertex, costmodel/layer_features.cc).
const char* kind_text(const LoweredOp& op);  // static storage

// Lowered ops in topological order. Contract: every graph op is either in exactly one
// lowered op or is one of the non-ops above.
std::vector<LoweredOp> lower(const model::LayerGraph& g);

// True if `name` matches the glob `pattern` ('*' any run of characters, '?' one character).
bool glob_match(const std::string& pattern, const std::string& name);

}  // namespace layoutx::costmodel
