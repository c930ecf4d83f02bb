#include "costmodel/op_class.h"

namespace layoutx::costmodel {

const char* to_string(OpClass c) {
  switch (c) {
    case OpClass::kMatMulWeight: return "matmul_weight";
    case OpClass::kMatMulAct: return "matmul_act";
    case OpClass::kSoftmax: return "softmax";
    case OpClass::kElementwise: return "elementwise";
    case OpClass::kRmsNorm: return "rmsnorm";
    case OpClass::kGeluErf: return "gelu_erf";
    case OpClass::kGeluTanh: return "gelu_tanh";
    case OpClass::kDataMovement: return "data_movement";
    case OpClass::kOutput: return "output";
    case OpClass::kConvert: return "convert";
  }
  return "?";
}

const std::vector<OpClass>& all_op_classes() {
  static const std::vector<OpClass> all = {
      OpClass::kMatMulWeight, OpClass::kMatMulAct, OpClass::kSoftmax,      OpClass::kElementwise, OpClass::kRmsNorm,
      OpClass::kGeluErf,      OpClass::kGeluTanh,  OpClass::kDataMovement, OpClass::kOutput,      OpClass::kConvert};
  return all;
}

bool parse_op_class(const std::string& s, OpClass& out) {
  for (OpClass c : all_op_classes())
    if (s == to_string(c)) {
      out = c;
      return true;
    }
  return false;
}

}  // namespace layoutx::costmodel
