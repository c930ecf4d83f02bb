#include "model/builder.h"

#include <cmath>
#include <initializer_list>
#include <span>

#include "support/error.h"

namespace layoutx::model {

namespace {

// Normalizes a possibly negative axis against a rank.
int norm_axis(int axis, size_t rank) { return axis < 0 ? axis + static_cast<int>(rank) : axis; }

class Builder {
 public:
  // A reserve hint: the largest shipped variant (full layer, score-join, explicit softmax,
  // window returns, w4a16) has 89 ops, a Gemma 3 one about 120; a bigger graph only costs a reallocation.
  static constexpr size_t kMaxOps = 160;

  // Builds into `lg` in place: LayerGraph has no cheap move (Boost's adjacency_list has no move
  // constructor; moving one copies every vertex and edge).
  explicit Builder(LayerGraph& lg) : lg_(lg) {
    const Variant& variant = lg.variant;
    // Room for every op, so the vertex storage does not move while the graph grows (Boost has
    // no reserve for vecS vertex storage; m_vertices is its public member).
    lg_.graph.m_vertices.reserve(kMaxOps);
    act_ = is_quantized(variant.precision()) ? DType::kU16 : DType::kF16;
    switch (weight_bits(variant.precision())) {
      case 16: wdt_ = DType::kF16; break;
      case 8: wdt_ = DType::kI8; break;
      default: wdt_ = DType::kI4; break;
    }
    switch (variant.kv_dtype()) {
      case KvDtype::kF16: cdt_ = DType::kF16; break;
      case KvDtype::kU8: cdt_ = DType::kU8; break;
      case KvDtype::kU16: cdt_ = DType::kU16; break;
    }
  }

  // Adds op `n` fed by `operands` in slot order. The node is moved in (Boost's add_vertex
  // with a property copies it twice) and the operands need no heap vector.
  Vertex add(OpNode n, std::span<const Vertex> operands) {
    Vertex v = boost::add_vertex(lg_.graph);
    lg_.graph[v] = std::move(n);
    for (size_t i = 0; i < operands.size(); ++i)
      boost::add_edge(operands[i], v, Operand{static_cast<int>(i)}, lg_.graph);
    return v;
  }
  Vertex add(OpNode n, std::initializer_list<Vertex> operands) {
    return add(std::move(n), std::span<const Vertex>(operands.begin(), operands.size()));
  }
  const Shape& shape(Vertex v) const { return lg_.graph[v].shape; }

  // A boundary input in the runtime's dtype (f16); quantized graphs convert it to u16.
  Vertex input(Role role, Shape s) {
    OpNode n{.name = std::string("in/") + role_name(role), .kind = OpKind::kInput, .shape = s,
             .dtype = DType::kF16, .role = role};
    Vertex v = add(n, {});
    if (act_ == DType::kF16) return v;
    return add({.name = std::string("in/") + role_name(role) + "/quantize", .kind = OpKind::kConvert,
                .shape = s, .dtype = act_},
               {v});
  }
  void output(Role role, Vertex x) {
    if (act_ != DType::kF16)
      x = add({.name = std::string("out/") + role_name(role) + "/dequantize", .kind = OpKind::kConvert,
               .shape = shape(x), .dtype = DType::kF16},
              {x});
    add({.name = std::string("out/") + role_name(role), .kind = OpKind::kOutput, .shape = shape(x),
         .dtype = DType::kF16, .role = role},
        {x});
  }
  Vertex weight(Role role, Shape s, bool projection) {
    const bool blocked = projection && wdt_ == DType::kI4;
    return add({.name = std::string("w/") + role_name(role), .kind = OpKind::kWeight, .shape = s,
                .dtype = projection ? wdt_ : act_, .role = role,
                .block = blocked ? block_rows(lg_.variant.weight_quant()) : 0},
               {});
  }
  // A K/V cache input in the cache's boundary dtype (kv_dtype). f16: input() (today's form). u8
  // and u16: no conversion in a quantized graph (the attention MatMuls read the cache as it is:
  // 16-bit activations x 8- or 16-bit cache); an fp16 graph dequantizes it to f16.
  Vertex cache_input(Role role, Shape s) {
    if (cdt_ == DType::kF16) return input(role, s);
    Vertex v = add({.name = std::string("in/") + role_name(role), .kind = OpKind::kInput, .shape = s, .dtype = cdt_,
                    .role = role},
                   {});
    if (act_ != DType::kF16) return v;
    return add({.name = std::string("in/") + role_name(role) + "/dequantize", .kind = OpKind::kConvert, .shape = s,
                .dtype = act_},
               {v});
  }
  // A new K/V entry as the cache holds it: in a quantized graph with a u8/u16 cache, quantized
  // with the cache's own encoding (tied input and output quantizers: the runtime copies its codes
  // into the cache without requantizing), so the join and the returned entry read the same codes.
  Vertex cache_entry(const std::string& name, Vertex x) {
    if (cdt_ == DType::kF16 || act_ == DType::kF16) return x;
    return add({.name = name + "/to_cache", .kind = OpKind::kConvert, .shape = shape(x), .dtype = cdt_}, {x});
  }
  // A cache output in the cache's boundary dtype: f16 as output(); u8/u16 quantized to it (a
  // no-op when x already holds the cache's codes).
  void cache_output(Role role, Vertex x) {
    if (cdt_ == DType::kF16) return output(role, x);
    if (lg_.graph[x].dtype != cdt_)
      x = add({.name = std::string("out/") + role_name(role) + "/quantize", .kind = OpKind::kConvert,
               .shape = shape(x), .dtype = cdt_},
              {x});
    add({.name = std::string("out/") + role_name(role), .kind = OpKind::kOutput, .shape = shape(x), .dtype = cdt_,
         .role = role},
        {x});
  }
  Vertex constant(const std::string& name, double value) {
    return add({.name = name, .kind = OpKind::kConstant, .shape = {1}, .dtype = act_, .scalar = value}, {});
  }

  static Shape broadcast(const Shape& a, const Shape& b, const std::string& name) {
    size_t r = std::max(a.size(), b.size());
    Shape out(r);
    for (size_t i = 0; i < r; ++i) {
      int64_t da = i + a.size() >= r ? a[i + a.size() - r] : 1;
      int64_t db = i + b.size() >= r ? b[i + b.size() - r] : 1;
      if (da != db && da != 1 && db != 1)
        throw Error("graph builder: " + name + ": shapes " + to_string(a) + " and " + to_string(b) +
                    " do not broadcast");
      out[i] = std::max(da, db);
    }
    return out;
  }
  Vertex unary(OpKind k, const std::string& name, Vertex x) {
    return add({.name = name, .kind = k, .shape = shape(x), .dtype = act_}, {x});
  }
  Vertex binary(OpKind k, const std::string& name, Vertex a, Vertex b) {
    return add({.name = name, .kind = k, .shape = broadcast(shape(a), shape(b), name), .dtype = act_}, {a, b});
  }
  // a b, or a b^T (transpose_b: b's last two axes swapped, as QNN's MatMul transpose_in1).
  Vertex matmul(const std::string& name, Vertex a, Vertex b, bool transpose_b = false) {
    const Shape& sa = shape(a);
    const Shape& sb = shape(b);
    const size_t rb = sb.size();
    if (sa.size() < 2 || rb < 2 || sa.back() != (transpose_b ? sb[rb - 1] : sb[rb - 2]))
      throw Error("graph builder: " + name + ": cannot multiply " + to_string(sa) + " by " + to_string(sb) +
                  (transpose_b ? " transposed" : ""));
    Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
    Shape out = broadcast(ba, bb, name);
    out.push_back(sa[sa.size() - 2]);
    out.push_back(transpose_b ? sb[rb - 2] : sb.back());
    return add({.name = name, .kind = OpKind::kMatMul, .shape = out, .dtype = act_, .transpose_b = transpose_b}, {a, b});
  }
  // Joined along `axis`; the result keeps its operands' dtype when they all share one that is
  // not the activations' (a u8/u16 cache and its new entry), else the activations'.
  Vertex concat(const std::string& name, std::initializer_list<Vertex> xs, int axis) {
    const Vertex* x = xs.begin();
    Shape out = shape(x[0]);
    int ax = norm_axis(axis, out.size());
    DType dt = lg_.graph[x[0]].dtype;
    for (size_t i = 1; i < xs.size(); ++i) {
      out[ax] += shape(x[i])[ax];
      if (lg_.graph[x[i]].dtype != dt) dt = act_;
    }
    if (dt != cdt_) dt = act_;
    return add({.name = name, .kind = OpKind::kConcat, .shape = out, .dtype = dt, .axis = axis}, xs);
  }
  Vertex slice(const std::string& name, Vertex x, int axis, int64_t start, int64_t end) {
    Shape out = shape(x);
    out[norm_axis(axis, out.size())] = end - start;
    // Data movement keeps its operand's dtype (a u8 cache window stays u8).
    return add({.name = name, .kind = OpKind::kSlice, .shape = out, .dtype = lg_.graph[x].dtype, .axis = axis,
                .start = start, .end = end},
               {x});
  }
  Vertex reshape(const std::string& name, Vertex x, Shape s) {
    if (numel(s) != numel(shape(x)))
      throw Error("graph builder: " + name + ": cannot reshape " + to_string(shape(x)) + " to " + to_string(s));
    return add({.name = name, .kind = OpKind::kReshape, .shape = s, .dtype = lg_.graph[x].dtype}, {x});
  }
  Vertex reduce(OpKind k, const std::string& name, Vertex x, int axis) {
    Shape out = shape(x);
    out[norm_axis(axis, out.size())] = 1;
    return add({.name = name, .kind = k, .shape = out, .dtype = act_, .axis = axis}, {x});
  }
  Vertex softmax(const std::string& name, Vertex x) {
    if (lg_.variant.softmax() == SoftmaxForm::kFused)
      return add({.name = name, .kind = OpKind::kSoftmax, .shape = shape(x), .dtype = act_, .axis = -1}, {x});
    // Explicit form: exp(x - max) / sum(exp(x - max)).
    Vertex m = reduce(OpKind::kReduceMax, name + "/max", x, -1);
    Vertex d = binary(OpKind::kSub, name + "/sub", x, m);
    Vertex e = unary(OpKind::kExp, name + "/exp", d);
    Vertex s = reduce(OpKind::kReduceSum, name + "/sum", e, -1);
    return binary(OpKind::kDiv, name + "/div", e, s);
  }
  Vertex rmsnorm(const std::string& name, Vertex x, Vertex w) {
    return add({.name = name, .kind = OpKind::kRmsNorm, .shape = shape(x), .dtype = act_,
                .axis = -1, .eps = lg_.layer.rms_eps},
               {x, w});
  }
  // The family's norm (LayerStructure::norm) of x over its last axis with weight role `role`.
  Vertex norm(const std::string& name, Vertex x, Role role) {
    const Vertex w = weight(role, {shape(x).back()}, false);
    switch (lg_.layer.structure.norm) {
      case NormKind::kRms: return rmsnorm(name, x, w);
      case NormKind::kRmsOnePlus:
        return add({.name = name, .kind = OpKind::kRmsNorm, .shape = shape(x), .dtype = act_, .axis = -1,
                    .eps = lg_.layer.rms_eps, .norm_offset = 1.0},
                   {x, w});
      case NormKind::kLayer:
        return add({.name = name, .kind = OpKind::kLayerNorm, .shape = shape(x), .dtype = act_, .axis = -1,
                    .eps = lg_.layer.rms_eps},
                   {x, w});
    }
    return x;
  }
  // x W (+ b): one projection, with its bias role when the structure has one.
  Vertex projection(const std::string& name, Vertex x, Role w, int64_t out, Role bias = Role::kNone) {
    Vertex y = matmul(name, x, weight(w, {shape(x).back(), out}, true));
    if (bias != Role::kNone) y = binary(OpKind::kAdd, name + "/bias", y, weight(bias, {out}, false));
    return y;
  }
  // NeoX rotary over the leading r dims of the last axis: x*cos + rotate_half(x)*sin, where
  // rotate_half(x) = concat(-x2, x1) with x1, x2 the two halves of the rotated part.
  Vertex rope(const std::string& name, Vertex x, Vertex cos, Vertex sin) {
    const int64_t d = shape(x).back();
    const int64_t r = lg_.layer.rope.rotary_dims;
    Vertex xr = r < d ? slice(name + "/rot_part", x, -1, 0, r) : x;
    Vertex x1 = slice(name + "/half1", xr, -1, 0, r / 2);
    Vertex x2 = slice(name + "/half2", xr, -1, r / 2, r);
    Vertex rot = concat(name + "/rotate_half", {unary(OpKind::kNeg, name + "/neg", x2), x1}, -1);
    Vertex y = binary(OpKind::kAdd, name + "/add", binary(OpKind::kMul, name + "/mul_cos", xr, cos),
                      binary(OpKind::kMul, name + "/mul_sin", rot, sin));
    if (r < d) y = concat(name + "/join_pass", {y, slice(name + "/pass_part", x, -1, r, d)}, -1);
    return y;
  }

  void build();

 private:
  LayerGraph& lg_;
  DType act_;
  DType wdt_;
  DType cdt_;  // the K/V caches' boundary dtype (kv_dtype)
};

void Builder::build() {
  const LayerSpec& L = lg_.layer;
  const Variant& V = lg_.variant;
  const int64_t H = L.hidden, nh = L.heads, kv = L.kv_heads, G = L.group(), D = L.head_dim,
                N = L.cache_entries, r = L.rope.rotary_dims, I = L.intermediate;

  // Graph inputs.
  Vertex x = input(Role::kHiddenIn, {1, H});
  // K transposed [kv, D, N] (today) or as rows [kv, N, D] (k_layout=rows: the scores MatMuls
  // read it transposed, and the new key joins it along the slot axis 1).
  const bool k_rows = V.k_layout() == KLayout::kRows;
  const int k_slot_axis = k_rows ? 1 : 2;
  Vertex k_cache = cache_input(Role::kKCache, k_rows ? Shape{kv, N, D} : Shape{kv, D, N});
  Vertex v_cache = cache_input(Role::kVCache, {kv, N, D});
  Vertex mask = input(Role::kMask, {1, 1, N + 1});
  Vertex cos = Graph::null_vertex(), sin = Graph::null_vertex();
  if (r > 0) {
    cos = input(Role::kRopeCos, {1, 1, r});
    sin = input(Role::kRopeSin, {1, 1, r});
  }

  // Attention block: pre-norm, QKV (fused as Spark writes it, or q/k/v projections), the
  // family's per-head q/k norm, RoPE, scaled scores.
  const LayerStructure& S = L.structure;
  Vertex xn = norm("attn/input_norm", x, Role::kInputNorm);
  Vertex q, k, v_new;
  if (S.qkv_fused) {
    Vertex qkv = matmul("attn/qkv_proj", xn, weight(Role::kQkv, {H, (nh + 2 * kv) * D}, true));
    q = reshape("attn/q_heads", slice("attn/q", qkv, -1, 0, nh * D), {kv, G, D});
    k = reshape("attn/k_heads", slice("attn/k", qkv, -1, nh * D, (nh + kv) * D), {kv, 1, D});
    v_new = reshape("attn/v_new", slice("attn/v", qkv, -1, (nh + kv) * D, (nh + 2 * kv) * D), {kv, 1, D});
  } else {
    const bool b = S.qkv_bias;
    q = reshape("attn/q_heads", projection("attn/q_proj", xn, Role::kQProj, nh * D, b ? Role::kQBias : Role::kNone),
                {kv, G, D});
    k = reshape("attn/k_heads", projection("attn/k_proj", xn, Role::kKProj, kv * D, b ? Role::kKBias : Role::kNone),
                {kv, 1, D});
    v_new = reshape("attn/v_new", projection("attn/v_proj", xn, Role::kVProj, kv * D, b ? Role::kVBias : Role::kNone),
                    {kv, 1, D});
  }
  if (S.qk_norm) {
    q = norm("attn/q_norm", q, Role::kQNorm);
    k = norm("attn/k_norm", k, Role::kKNorm);
  }
  if (r > 0) {
    q = rope("attn/q_rope", q, cos, sin);
    k = rope("attn/k_rope", k, cos, sin);
  }
  const double scale = S.query_scale > 0 ? S.query_scale : 1.0 / std::sqrt(double(D));
  q = binary(OpKind::kMul, "attn/q_scale", q, constant("attn/scale", scale));
  // The new key in the cache's layout: [kv,D,1] transposed (a reshape of [kv,1,D]: same
  // elements), or [kv,1,D] as rows.
  Vertex k_new_t = k_rows ? k : reshape("attn/k_new_t", k, {kv, D, 1});
  // The new entry as the cache holds it (u8/u16 caches of a quantized graph: the cache's codes).
  Vertex k_entry = Graph::null_vertex(), v_entry = Graph::null_vertex();
  auto need_k_entry = [&] {
    if (k_entry == Graph::null_vertex()) k_entry = cache_entry("attn/k_new", k_new_t);
    return k_entry;
  };
  auto need_v_entry = [&] {
    if (v_entry == Graph::null_vertex()) v_entry = cache_entry("attn/v_new", v_new);
    return v_entry;
  };

  // Where the new token meets the cache.
  Vertex k_all = Graph::null_vertex(), v_all = Graph::null_vertex();  // cache + new entry, built when a form needs them
  auto need_k_all = [&] {
    if (k_all == Graph::null_vertex()) k_all = concat("attn/k_concat", {k_cache, need_k_entry()}, k_slot_axis);
    return k_all;
  };
  auto need_v_all = [&] {
    if (v_all == Graph::null_vertex()) v_all = concat("attn/v_concat", {v_cache, need_v_entry()}, 1);
    return v_all;
  };
  Vertex scores, context;
  if (V.join() == Join::kKeys) {
    scores = matmul("attn/scores", q, need_k_all(), k_rows);  // [kv,G,N+1]
  } else {
    Vertex s_cache = matmul("attn/scores_cache", q, k_cache, k_rows);  // [kv,G,N]
    Vertex s_new = V.new_score() == NewScore::kMatMul
                       ? matmul("attn/score_new", q, k_new_t, k_rows)  // [kv,G,1]
                       : reduce(OpKind::kReduceSum, "attn/score_new",
                                binary(OpKind::kMul, "attn/score_new_mul", q, k), -1);
    scores = concat("attn/scores", {s_cache, s_new}, -1);
  }
  if (S.attn_softcap > 0) {
    // Gemma 2: scores = tanh(scores / c) * c, before the mask.
    Vertex t = unary(OpKind::kTanh, "attn/softcap_tanh",
                     binary(OpKind::kMul, "attn/softcap_div", scores, constant("attn/softcap_inv", 1.0 / S.attn_softcap)));
    scores = binary(OpKind::kMul, "attn/softcap", t, constant("attn/softcap_c", S.attn_softcap));
  }
  // softmax=masked: one Softmax op over (scores, mask), the add folded in (QNN's MaskedSoftmax).
  Vertex probs = V.softmax() == SoftmaxForm::kMasked
                     ? add({.name = "attn/softmax", .kind = OpKind::kSoftmax,
                            .shape = broadcast(shape(scores), shape(mask), "attn/softmax"), .dtype = act_, .axis = -1},
                           {scores, mask})
                     : softmax("attn/softmax", binary(OpKind::kAdd, "attn/mask_add", scores, mask));
  if (V.join() == Join::kKeys) {
    context = matmul("attn/context", probs, need_v_all());  // [kv,G,D]
  } else {
    Vertex p_cache = slice("attn/probs_cache", probs, -1, 0, N);
    Vertex p_new = slice("attn/prob_new", probs, -1, N, N + 1);
    Vertex c_cache = matmul("attn/context_cache", p_cache, v_cache);
    Vertex c_new = V.new_value() == NewValue::kMatMul
                       ? matmul("attn/context_new", p_new, v_new)  // [kv,G,1]x[kv,1,D]
                       : binary(OpKind::kMul, "attn/context_new", p_new, v_new);  // broadcast over G and D
    context = binary(OpKind::kAdd, "attn/context", c_cache, c_new);
  }

  // Head-wise gate: one sigmoid scalar per query head, from the normed input.
  if (L.head_gate) {
    Vertex g = matmul("attn/head_gate_proj", xn, weight(Role::kHeadGate, {H, nh}, true));
    g = reshape("attn/head_gate_heads", unary(OpKind::kSigmoid, "attn/head_gate_sigmoid", g), {kv, G, 1});
    context = binary(OpKind::kMul, "attn/head_gate_mul", context, g);
  }
  Vertex attn = matmul("attn/out_proj", reshape("attn/merge_heads", context, {1, nh * D}),
                       weight(Role::kOutProj, {nh * D, H}, true));
  if (S.sandwich_norms) attn = norm("attn/output_norm", attn, Role::kAttnPostNorm);

  // Gated MLP: down(act(gate(x)) * up(x)), from the residual stream after attention, or (a
  // parallel block, Cohere) from the attention's own normed input: y = (x + attn) + mlp(xn).
  Vertex h = binary(OpKind::kAdd, "attn/residual", x, attn);
  Vertex hn = S.parallel_block ? xn : norm("mlp/post_norm", h, Role::kPostNorm);
  Vertex gate = matmul("mlp/gate_proj", hn, weight(Role::kMlpGate, {H, I}, true));
  Vertex up = matmul("mlp/up_proj", hn, weight(Role::kMlpUp, {H, I}, true));
  Vertex a;
  if (L.activation == Activation::kSilu) {
    a = binary(OpKind::kMul, "mlp/act", gate, unary(OpKind::kSigmoid, "mlp/act_sigmoid", gate));
  } else {
    a = add({.name = "mlp/act", .kind = OpKind::kGelu, .shape = shape(gate), .dtype = act_, .gelu = V.gelu()},
            {gate});
  }
  Vertex down = matmul("mlp/down_proj", binary(OpKind::kMul, "mlp/gate_mul", a, up),
                       weight(Role::kMlpDown, {I, H}, true));
  if (S.sandwich_norms) down = norm("mlp/output_norm", down, Role::kMlpPostNorm);
  Vertex y = binary(OpKind::kAdd, "mlp/residual", h, down);

  // Graph outputs.
  output(Role::kHiddenOut, y);
  if (V.returns() == KvReturn::kWindow) {
    // Roll: drop the oldest entry, hand the whole updated cache back.
    cache_output(Role::kKOut, slice("cache/k_window", need_k_all(), k_slot_axis, 1, N + 1));
    cache_output(Role::kVOut, slice("cache/v_window", need_v_all(), 1, 1, N + 1));
  } else {
    cache_output(Role::kKOut, need_k_entry());
    cache_output(Role::kVOut, need_v_entry());
  }
}

}  // namespace

LayerGraph build_layer_graph(const LayerSpec& layer, const Variant& variant) {
  variant.validate();
  ErrorList e;
  if (layer.heads <= 0 || layer.kv_heads <= 0 || layer.heads % layer.kv_heads)
    e.add("layer: heads (" + std::to_string(layer.heads) + ") must be a positive multiple of kv_heads (" +
          std::to_string(layer.kv_heads) + ")");
  if (layer.cache_entries < 1) e.add("layer: cache_entries must be at least 1, got " + std::to_string(layer.cache_entries));
  if (layer.rope.rotary_dims < 0 || layer.rope.rotary_dims > layer.head_dim || layer.rope.rotary_dims % 2)
    e.add("layer: rotary_dims must be even and within head_dim " + std::to_string(layer.head_dim) + ", got " +
          std::to_string(layer.rope.rotary_dims));
  if (layer.hidden <= 0 || layer.intermediate <= 0 || layer.head_dim <= 0)
    e.add("layer: hidden, intermediate and head_dim must be positive");
  e.throw_if_any();
  LayerGraph lg{Graph(), layer, variant};
  // sliding_cache=context: a sliding layer whose cache holds its window (window-1 slots) takes a
  // full layer's context-1 slots instead; the runtime's mask hides what is older than the window
  // (kv_cache.h kv_slot_open). A cache of another size (the checkpoints' one-entry graphs) is kept.
  if (variant.sliding_cache() == SlidingCache::kContext && layer.type == LayerType::kSliding &&
      layer.cache_entries == layer.window - 1 && layer.context - 1 > layer.cache_entries)
    lg.layer.cache_entries = layer.context - 1;
  Builder(lg).build();
  return lg;  // named return value: not copied
}

}  // namespace layoutx::model
