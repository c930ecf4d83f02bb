// The cost classes of lowered HTP ops: coefficients are kept per (class, precision).
#pragma once
#include <string>
#include <vector>

namespace layoutx::costmodel {

enum class OpClass {
  kMatMulWeight,  // weight-streaming projection: MatMul with a Weight operand (QKV, gate, MLP, out)
  kMatMulAct,     // MatMul of two activations (attention scores / context)
  kSoftmax,       // the fused Softmax op
  kElementwise,   // Add, Sub, Mul, Div, Neg, Sigmoid, Exp, ReduceMax, ReduceSum
  kRmsNorm,       // the fused RMSNorm op
  kGeluErf,       // exact GELU
  kGeluTanh,      // tanh-approximated GELU
  kDataMovement,  // Concat, Slice: copies
  kOutput,        // graph Output: copies a tensor across the graph boundary
  kConvert,       // boundary quantize / dequantize of a quantized graph
};

// "matmul_weight", "matmul_act", ... (the names configs/devices/*.yaml use).
const char* to_string(OpClass c);
// Every class, in enum order.
const std::vector<OpClass>& all_op_classes();
// Parses a class name; returns false if unknown.
bool parse_op_class(const std::string& s, OpClass& out);

}  // namespace layoutx::costmodel
