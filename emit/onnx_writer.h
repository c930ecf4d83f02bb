// model::LayerGraph -> ONNX ModelProto: exactly the graph layoutx models, op by op.
//
// Each OpKind becomes the ONNX op(s) below (float32 throughout; see README "Emitted ONNX" for
// why float32 and how quantized precisions are handled):
//   Input/Output  graph input/output named by role_name (Output as an Identity node: the copy
//                 across the boundary is an op in layoutx's model too)
//   Weight        initializer named by role_name; Constant: a [1] initializer
//   Convert       Cast(to=FLOAT): a no-op in the float graph, kept so nodes match layoutx's ops;
//                 the device toolchain's quantize step turns it into the real conversion. A u8
//                 cache Convert with a range (OnnxOptions::cache_ranges): QuantizeLinear ->
//                 DequantizeLinear, the tied cache encoding spelled out
//   Softmax       Softmax; with a mask operand (softmax=masked, QNN's MaskedSoftmax): Add then Softmax
//   MatMul        MatMul; with transpose_b (k_layout=rows scores): Transpose(last two axes) MatMul
//   RmsNorm       Mul(x,x) ReduceMean(last axis) Add(eps) Sqrt Div(x, .) Mul(weight)
//   Gelu erf      0.5 * x * (1 + Erf(x / sqrt 2)): Mul Erf Add Mul Mul
//   Gelu tanh     0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 x^3))): Mul Mul Mul Add Mul Tanh Add Mul Mul
//   Slice         Slice with constant starts/ends/axes inputs; Reshape with a constant shape input
//   ReduceSum     axes as an input (opset >= 13); ReduceMax/ReduceMean: axes attribute (< 18)
//   the rest      the same-named ONNX op (MatMul Add Sub Mul Div Neg Sigmoid Exp Softmax Concat)
// Node names are layoutx op names ("attn/scores"); a spelled-out op's extra nodes are named
// "<op>/<step>". Tensor names are the op names too, except graph I/O (role names).
#pragma once
#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "emit/weights.h"
#include "model/graph.h"

namespace layoutx::emit {

// The highest default-domain opset the installed ONNX library knows (17 for ONNX 1.12).
int max_supported_opset();

struct OnnxOptions {
  int opset = 0;            // 0: max_supported_opset()
  std::string graph_name;   // "" : "layoutx_<layer>_<preset or key>"
  // The calibrated range (lo, hi) of u8 cache Converts (kv_dtype=u8), by op name. A u8 Convert
  // with a range becomes QuantizeLinear -> DequantizeLinear (uint8, zero point 128, scale
  // max(|lo|, |hi|) / 127: numerics::quantize_u8_symmetric); without one, a Cast like every
  // Convert. u16 caches stay Casts (uint16 QuantizeLinear needs opset 21; libonnx 1.12 knows 17).
  const std::map<std::string, std::pair<double, double>>* cache_ranges = nullptr;
};

// Builds the model. Throws Error for an opset below 13 (ReduceSum's axes input) or above the
// library's maximum.
onnx::ModelProto to_onnx(const model::LayerGraph& g, const WeightSource& weights, const OnnxOptions& opt = {});

// Runs onnx::checker::check_model and strict shape inference, then checks that every graph
// output's inferred shape equals the layoutx shape. Throws Error with the checker's message.
void check_onnx(const onnx::ModelProto& m, const model::LayerGraph& g);
// The same for a model joined from several layer graphs (a part, emit/part.h): the checker and
// shape inference once, then each graph's tensors under name_of(graph index, its own name).
void check_joined_onnx(const onnx::ModelProto& m, const std::vector<const model::LayerGraph*>& graphs,
                       const std::function<std::string(size_t, const std::string&)>& name_of);

// Serializes to a file; throws Error naming the path on failure.
void write_onnx(const onnx::ModelProto& m, const std::string& path);
onnx::ModelProto read_onnx(const std::string& path);

}  // namespace layoutx::emit
