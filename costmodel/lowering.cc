#include "costmodel/lowering.h"

#include "model/analysis.h"

namespace layoutx::costmodel {

namespace {

bool has_weight_operand(const model::LayerGraph& g, model::Vertex v) {
  for (model::Vertex u : g.operands(v))
    if (model::is_folded_weight(g, u)) return true;
  return false;
}

// The class of one graph op, or false if it is not an HTP op.
bool classify(const model::LayerGraph& g, model::Vertex v, OpClass& c) {
  const model::OpNode& n = g.op(v);
  if (model::is_folded_weight(g, v)) return false;  // a weight, or a slice the converter folds into one
  switch (n.kind) {
    case model::OpKind::kInput:
    case model::OpKind::kWeight:
    case model::OpKind::kConstant:
    case model::OpKind::kReshape:
      return false;
    case model::OpKind::kOutput: c = OpClass::kOutput; return true;
    case model::OpKind::kConvert: c = OpClass::kConvert; return true;
    case model::OpKind::kRmsNorm:
    case model::OpKind::kLayerNorm:  // one fused norm op as well: priced like the RMSNorm
      c = OpClass::kRmsNorm;
      return true;
    case model::OpKind::kMatMul:
      c = has_weight_operand(g, v) ? OpClass::kMatMulWeight : OpClass::kMatMulAct;
      return true;
    case model::OpKind::kConv:  // a 1x1 Conv (projection=conv1x1): a weight MatMul until cost model 3 prices it
      c = OpClass::kMatMulWeight;
      return true;
    case model::OpKind::kAdd:
    case model::OpKind::kSub:
    case model::OpKind::kMul:
    case model::OpKind::kDiv:
    case model::OpKind::kNeg:
    case model::OpKind::kSigmoid:
    case model::OpKind::kExp:
    case model::OpKind::kTanh:  // softcapping's tanh: one elementwise op
    case model::OpKind::kReduceMax:
    case model::OpKind::kReduceSum:
      c = OpClass::kElementwise;
      return true;
    case model::OpKind::kGelu:
      c = n.gelu == model::GeluForm::kErf ? OpClass::kGeluErf : OpClass::kGeluTanh;
      return true;
    case model::OpKind::kSoftmax: c = OpClass::kSoftmax; return true;
    case model::OpKind::kConcat:
    case model::OpKind::kSlice:
      c = OpClass::kDataMovement;
      return true;
  }
  return false;
}

}  // namespace

const char* kind_text(const LoweredOp& op) {
  if (op.kind == model::OpKind::kInput && op.op_class == OpClass::kDataMovement) return "Relayout";
  if (op.kind == model::OpKind::kMatMul && op.op_class == OpClass::kDataMovement) return "Transpose";
  return model::to_string(op.kind);
}

std::vector<LoweredOp> lower(const model::LayerGraph& g) {
  std::vector<LoweredOp> out;
  out.reserve(g.size());
  for (model::Vertex v : g.topological_order()) {
    OpClass c;
    if (!classify(g, v, c)) continue;
    out.push_back({g.op(v).name, g.op(v).kind, c, {v}});
  }
  return out;
}

bool glob_match(const std::string& pattern, const std::string& name) {
  // Iterative glob with backtracking to the last '*'.
  size_t p = 0, s = 0, star = std::string::npos, mark = 0;
  while (s < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[s])) {
      ++p;
      ++s;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = s;
    } else if (star != std::string::npos) {
      p = star + 1;
      s = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace layoutx::costmodel
