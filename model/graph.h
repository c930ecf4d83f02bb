// The op graph of one decode-step layer: plain data (Boost.Graph DAG of typed ops with output
// shapes and dtypes). Analyses (bytes, MACs, costs, legality) live in side tables keyed by
// vertex id, never on the nodes (style.md).
#pragma once
#include <boost/container/small_vector.hpp>
#include <boost/graph/adjacency_list.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "model/model_spec.h"
#include "model/variant.h"

namespace layoutx::model {

enum class DType {
  kF32,
  kF16,
  kU16,  // 16-bit quantized activation (uint16 with scale/offset)
  kU8,   // 8-bit quantized K/V cache (kv_dtype=u8): uint8, symmetric (offset 128), one scale per tensor
  kI8,   // 8-bit quantized weight (per-channel symmetric)
  kI4,   // 4-bit quantized weight, two per byte
  kI32,
};
const char* to_string(DType d);
// Storage bits per element.
int dtype_bits(DType d);

// Op kinds. Semantics follow ONNX where a same-named ONNX op exists (numpy broadcasting;
// axes may be negative). Every analysis switches over this enum without a default, so a new
// kind cannot be forgotten.
enum class OpKind {
  kInput,     // graph input; `role` says which (hidden state, cache, mask, rotary table)
  kWeight,    // a parameter tensor; `role` says which
  kConstant,  // a scalar constant `scalar` broadcast to `shape` (e.g. 1/sqrt(head_dim))
  kOutput,    // graph output: copies its operand across the graph boundary; `role` says which
  kConvert,   // dtype conversion (quantize / dequantize) at the graph boundary
  kRmsNorm,   // x * rsqrt(mean(x^2, last axis) + eps) * (weight + norm_offset); operands (x, weight)
  kLayerNorm, // (x - mean) * rsqrt(var + eps) * weight over the last axis, no bias; operands (x, weight)
  kMatMul,    // batched matrix product, ONNX MatMul broadcasting
  kAdd,
  kSub,
  kMul,
  kDiv,
  kNeg,
  kSigmoid,
  kExp,
  kTanh,
  kGelu,      // `gelu` says erf (exact) or tanh (approximation)
  kSoftmax,   // over `axis`; with a second operand (softmax=masked), of operand 0 + operand 1 (the mask)
  kReduceMax, // over `axis`, keepdims
  kReduceSum, // over `axis`, keepdims
  kConcat,    // operands joined along `axis`
  kSlice,     // [start, end) along `axis`
  kReshape,   // same elements, new `shape` (row-major); a view, moves no data
  kConv,      // ONNX Conv with a 1x1 kernel, no bias (projection=conv1x1): x [N, C, H, W] by weight
              // [O, C, 1, 1] -> [N, O, H, W]; each pixel's channels times the weight's rows
};
const char* to_string(OpKind k);

// Which tensor an Input / Weight / Output stands for. The emitter and executor bind data by
// role; the names (role_name) are the graph's I/O signature.
enum class Role {
  kNone,
  // inputs
  kHiddenIn,  // [1, hidden]: the token's hidden state
  kKCache,    // [kv_heads, head_dim, cache]: past keys, stored transposed (k_layout=rows: [kv_heads, cache, head_dim])
  kVCache,    // [kv_heads, cache, head_dim]: past values
  kMask,      // [1, 1, keys]: additive attention mask (0 or a large negative) over the keys
  kRopeCos,   // [1, 1, rotary_dims]: cos of the current position's rotary angles
  kRopeSin,   // [1, 1, rotary_dims]
  // weights (Spark2_5 tensor names in comments)
  kInputNorm,  // input_layernorm [hidden]
  kQkv,        // q_k_v_proj, transposed to [hidden, (heads + 2 kv_heads) head_dim]
  kHeadGate,   // g_proj, transposed to [hidden, heads]
  kOutProj,    // out_proj, transposed to [heads head_dim, hidden]
  kPostNorm,   // post_attention_layernorm [hidden]
  kMlpGate,    // gate_proj, transposed to [hidden, intermediate]
  kMlpUp,      // up_proj, transposed to [hidden, intermediate]
  kMlpDown,    // down_proj, transposed to [intermediate, hidden]
  // outputs
  kHiddenOut,  // [1, hidden]
  kKOut,       // returns=window: [kv_heads, head_dim, cache]; new_entry: [kv_heads, head_dim, 1] (k_layout=rows: cache and head_dim swapped)
  kVOut,       // returns=window: [kv_heads, cache, head_dim]; new_entry: [kv_heads, 1, head_dim]
  // Weights of the other families' layers (HF tensor names). Appended after the first roles
  // because seeded weights draw from a stream seeded by the role's value.
  kQProj,         // q_proj, transposed to [hidden, heads head_dim]
  kKProj,         // k_proj, transposed to [hidden, kv_heads head_dim]
  kVProj,         // v_proj, transposed to [hidden, kv_heads head_dim]
  kQBias,         // q_proj.bias [heads head_dim] (Qwen2)
  kKBias,         // k_proj.bias [kv_heads head_dim]
  kVBias,         // v_proj.bias [kv_heads head_dim]
  kQNorm,         // q_norm [head_dim] (Qwen3, Gemma 3)
  kKNorm,         // k_norm [head_dim]
  kAttnPostNorm,  // Gemma's post_attention_layernorm [hidden]: norms the attention output
  kMlpPostNorm,   // Gemma's post_feedforward_layernorm [hidden]: norms the MLP output
};
const char* role_name(Role r);

// A tensor's dimensions, inline up to rank 6 (every shape the builder makes: no heap allocation
// per op or per copy of a shape).
using Shape = boost::container::small_vector<int64_t, 6>;
int64_t numel(const Shape& s);
std::string to_string(const Shape& s);  // "[8,1,256]"

struct OpNode {
  std::string name;  // unique within the graph, e.g. "attn/scores"
  OpKind kind = OpKind::kInput;
  Shape shape;       // output shape
  DType dtype = DType::kF16;  // output dtype
  Role role = Role::kNone;    // Input / Weight / Output only
  // Attributes; each kind uses only what its comment above says.
  int axis = -1;
  int64_t start = 0, end = 0;  // kSlice
  GeluForm gelu = GeluForm::kErf;
  double scalar = 0.0;         // kConstant
  double eps = 0.0;            // kRmsNorm, kLayerNorm
  double norm_offset = 0.0;    // kRmsNorm: added to the weight (Gemma's 1 + w)
  // kWeight of dtype i4: rows per LPBQ block along the input axis (weight_quant=blockN); 0: per
  // output channel. Its bytes add one 4-bit integer scale per block and output channel.
  int block = 0;
  // kMatMul: the second operand is read transposed (QNN MatMul's transpose_in1; ONNX: a
  // Transpose of its last two axes before the MatMul). k_layout=rows scores only.
  bool transpose_b = false;
  // kWeight: a projection stored as a 1x1 Conv's weight [out, in, 1, 1] (projection=conv1x1);
  // the role's tensor is [in, out] (the transposed layouts above), so its data is transposed
  // where it is bound (executor, ONNX writer). Quantized per output channel (and by input-row
  // blocks) exactly as the [in, out] form.
  bool conv_layout = false;
  // heads=per_head: how many op chains like this op's (one per KV head, or one per query head)
  // the layer has side by side, each independent of the others; 0 for an op of no such chain.
  // What the cost model reads when chains may run at once (costmodel/structure.h head_chains).
  int chains = 0;
};

// Edge property: which operand slot of the target the source feeds.
struct Operand {
  int index = 0;
};

// Edges live in a vector (EdgeListS = vecS): a graph is built once and never edited, and a list
// would allocate per edge.
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, OpNode, Operand, boost::no_property,
                                    boost::vecS>;
using Vertex = Graph::vertex_descriptor;
// An op's operands in slot order, inline up to 4 (the builder's ops take at most 2), so asking
// for them does not allocate.
using Operands = boost::container::small_vector<Vertex, 4>;

// A built layer: the graph and what it was built from. Boost's adjacency_list has no move
// constructor, so moving a LayerGraph copies every vertex and edge: build it where it is used
// (build_layer_graph returns by named return value) and pass it by reference.
struct LayerGraph {
  Graph graph;
  LayerSpec layer;
  Variant variant;

  const OpNode& op(Vertex v) const { return graph[v]; }
  size_t size() const { return boost::num_vertices(graph); }
  // Operands of v in slot order.
  Operands operands(Vertex v) const;
  // Users of v (ops that take it as an operand).
  std::vector<Vertex> users(Vertex v) const;
  // Vertices in an order where every op comes after its operands. Vertex ids are assigned in
  // build order, which already is one; this checks it and returns it.
  std::vector<Vertex> topological_order() const;
  // The Input / Weight / Output vertex of a role; throws Error if there is none.
  Vertex find(Role r) const;
  bool has(Role r) const;
  // Vertices of a kind, in id order.
  std::vector<Vertex> of_kind(OpKind k) const;
  int count(OpKind k) const { return static_cast<int>(of_kind(k).size()); }
  // Vertex by name; throws Error if none.
  Vertex by_name(const std::string& name) const;
};

}  // namespace layoutx::model
