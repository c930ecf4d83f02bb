#include "model/graph.h"

#include <algorithm>

#include "support/error.h"

namespace layoutx::model {

const char* to_string(DType d) {
  switch (d) {
    case DType::kF32: return "f32";
    case DType::kF16: return "f16";
    case DType::kU16: return "u16";
    case DType::kU8: return "u8";
    case DType::kI8: return "i8";
    case DType::kI4: return "i4";
    case DType::kI32: return "i32";
  }
  return "?";
}

int dtype_bits(DType d) {
  switch (d) {
    case DType::kF32: return 32;
    case DType::kF16: return 16;
    case DType::kU16: return 16;
    case DType::kU8: return 8;
    case DType::kI8: return 8;
    case DType::kI4: return 4;
    case DType::kI32: return 32;
  }
  return 0;
}

const char* to_string(OpKind k) {
  switch (k) {
    case OpKind::kInput: return "Input";
    case OpKind::kWeight: return "Weight";
    case OpKind::kConstant: return "Constant";
    case OpKind::kOutput: return "Output";
    case OpKind::kConvert: return "Convert";
    case OpKind::kRmsNorm: return "RmsNorm";
    case OpKind::kLayerNorm: return "LayerNorm";
    case OpKind::kTanh: return "Tanh";
    case OpKind::kMatMul: return "MatMul";
    case OpKind::kAdd: return "Add";
    case OpKind::kSub: return "Sub";
    case OpKind::kMul: return "Mul";
    case OpKind::kDiv: return "Div";
    case OpKind::kNeg: return "Neg";
    case OpKind::kSigmoid: return "Sigmoid";
    case OpKind::kExp: return "Exp";
    case OpKind::kGelu: return "Gelu";
    case OpKind::kSoftmax: return "Softmax";
    case OpKind::kReduceMax: return "ReduceMax";
    case OpKind::kReduceSum: return "ReduceSum";
    case OpKind::kConcat: return "Concat";
    case OpKind::kSlice: return "Slice";
    case OpKind::kReshape: return "Reshape";
    case OpKind::kConv: return "Conv";
  }
  return "?";
}

const char* role_name(Role r) {
  switch (r) {
    case Role::kNone: return "";
    case Role::kHiddenIn: return "hidden_in";
    case Role::kKCache: return "k_cache";
    case Role::kVCache: return "v_cache";
    case Role::kMask: return "mask";
    case Role::kRopeCos: return "rope_cos";
    case Role::kRopeSin: return "rope_sin";
    case Role::kInputNorm: return "input_layernorm";
    case Role::kQkv: return "q_k_v_proj";
    case Role::kHeadGate: return "g_proj";
    case Role::kOutProj: return "out_proj";
    case Role::kPostNorm: return "post_attention_layernorm";
    case Role::kMlpGate: return "gate_proj";
    case Role::kMlpUp: return "up_proj";
    case Role::kMlpDown: return "down_proj";
    case Role::kHiddenOut: return "hidden_out";
    case Role::kKOut: return "k_out";
    case Role::kVOut: return "v_out";
    case Role::kQProj: return "q_proj";
    case Role::kKProj: return "k_proj";
    case Role::kVProj: return "v_proj";
    case Role::kQBias: return "q_proj.bias";
    case Role::kKBias: return "k_proj.bias";
    case Role::kVBias: return "v_proj.bias";
    case Role::kQNorm: return "q_norm";
    case Role::kKNorm: return "k_norm";
    case Role::kAttnPostNorm: return "attn_output_norm";
    case Role::kMlpPostNorm: return "mlp_output_norm";
  }
  return "?";
}

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

std::string to_string(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

Operands LayerGraph::operands(Vertex v) const {
  // Operand slots are 0..in_degree-1 (the builder numbers them so): place each source in its
  // slot directly; fall back to sorting if a graph was edited into another numbering.
  const size_t n = boost::in_degree(v, graph);
  Operands r(n, Graph::null_vertex());
  bool dense = true;
  for (auto [it, end] = boost::in_edges(v, graph); it != end; ++it) {
    const int i = graph[*it].index;
    if (i < 0 || static_cast<size_t>(i) >= n || r[i] != Graph::null_vertex()) {
      dense = false;
      break;
    }
    r[i] = boost::source(*it, graph);
  }
  if (dense) return r;
  std::vector<std::pair<int, Vertex>> slots;
  for (auto [it, end] = boost::in_edges(v, graph); it != end; ++it)
    slots.emplace_back(graph[*it].index, boost::source(*it, graph));
  std::sort(slots.begin(), slots.end());
  r.clear();
  for (auto& [i, u] : slots) r.push_back(u);
  return r;
}

std::vector<Vertex> LayerGraph::users(Vertex v) const {
  std::vector<Vertex> r;
  for (auto [it, end] = boost::out_edges(v, graph); it != end; ++it) r.push_back(boost::target(*it, graph));
  std::sort(r.begin(), r.end());
  r.erase(std::unique(r.begin(), r.end()), r.end());
  return r;
}

std::vector<Vertex> LayerGraph::topological_order() const {
  std::vector<Vertex> order;
  order.reserve(boost::num_vertices(graph));
  for (auto [it, end] = boost::vertices(graph); it != end; ++it) {
    for (auto [e, e_end] = boost::in_edges(*it, graph); e != e_end; ++e) {
      Vertex u = boost::source(*e, graph);
      if (u >= *it) throw Error("graph: op '" + graph[*it].name + "' precedes its operand '" + graph[u].name + "'");
    }
    order.push_back(*it);
  }
  return order;
}

bool LayerGraph::has(Role r) const {
  for (auto [it, end] = boost::vertices(graph); it != end; ++it)
    if (graph[*it].role == r) return true;
  return false;
}

Vertex LayerGraph::find(Role r) const {
  for (auto [it, end] = boost::vertices(graph); it != end; ++it)
    if (graph[*it].role == r) return *it;
  throw Error(std::string("graph: no tensor with role '") + role_name(r) + "'");
}

std::vector<Vertex> LayerGraph::of_kind(OpKind k) const {
  std::vector<Vertex> r;
  for (auto [it, end] = boost::vertices(graph); it != end; ++it)
    if (graph[*it].kind == k) r.push_back(*it);
  return r;
}

Vertex LayerGraph::by_name(const std::string& name) const {
  for (auto [it, end] = boost::vertices(graph); it != end; ++it)
    if (graph[*it].name == name) return *it;
  throw Error("graph: no op named '" + name + "'");
}

}  // namespace layoutx::model
