// The reference executor: runs a built layer graph for one decode step, op by op, exactly as
// built (so a wrong graph gives a wrong answer), in float or double arithmetic (Eigen matrix
// products for MatMul; numpy/ONNX broadcasting for elementwise ops and MatMul batch axes).
#pragma once
#include <map>

#include "model/graph.h"
#include "model/numerics/tensor.h"
#include "model/numerics/weights.h"

namespace layoutx::model::numerics {

struct ExecOptions {
  // false: every op in the arithmetic type T, dtypes ignored (checks the graph's function).
  // true: the graph's dtypes are simulated: f16 outputs rounded to float16; u16 outputs and
  // Converts to u16 quantized per tensor (quantize.h); i8/i4 weights quantized per output
  // channel; f16/u16 weights rounded/quantized. Data movement (Reshape, Slice) keeps its
  // operand's values (a slice shares its operand's encoding).
  bool simulate_precision = false;
};

// Tensors bound to graph inputs or read from graph outputs, by role.
template <typename T>
using RoleTensors = std::map<Role, Tensor<T>>;

template <typename T>
class Executor {
 public:
  // Prepares the weights once (conversion, quantization). Throws Error if a weight the graph
  // needs is missing or has the wrong shape.
  Executor(const LayerGraph& graph, const LayerWeights& weights, ExecOptions options = {});

  // One decode step: `inputs` must hold every Input role of the graph with its shape. Returns
  // every Output role. Throws Error naming the op if an operand's shape does not fit it.
  RoleTensors<T> run(const RoleTensors<T>& inputs);

  const LayerGraph& graph() const { return graph_; }

 private:
  void eval(Vertex v);
  void simulate_dtype(Vertex v, Tensor<T>& t) const;
  const Tensor<T>& value(Vertex v) const { return *ptr_[v]; }

  LayerGraph graph_;
  ExecOptions options_;
  std::vector<Vertex> order_;
  std::vector<std::vector<Vertex>> operands_;
  std::vector<Tensor<T>> own_;           // per-vertex storage (weights and constants persist across steps)
  std::vector<const Tensor<T>*> ptr_;  // the value of each vertex this step
};

extern template class Executor<float>;
extern template class Executor<double>;

}  // namespace layoutx::model::numerics
