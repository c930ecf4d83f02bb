#include "model/builder.h"

#include <cmath>
#include <initializer_list>
#include <map>
#include <span>
#include <vector>

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
    // heads=per_head: about 40 ops more per head.
    const int64_t per_head = variant.heads() == HeadsForm::kPerHead ? 48 * (lg.layer.heads + lg.layer.kv_heads) : 0;
    lg_.graph.m_vertices.reserve(kMaxOps + static_cast<size_t>(per_head));
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
  // A role's weight vertex, made once (heads=per_head reads slices of one weight many times; the
  // emitter names an initializer by its role). `conv`: laid out [out, in, 1, 1] (graph.h).
  Vertex weight(Role role, Shape s, bool projection, bool conv = false) {
    if (auto it = weights_.find(role); it != weights_.end()) return it->second;
    const bool blocked = projection && wdt_ == DType::kI4;
    const Vertex v = add({.name = std::string("w/") + role_name(role), .kind = OpKind::kWeight, .shape = s,
                          .dtype = projection ? wdt_ : act_, .role = role,
                          .block = blocked ? block_rows(lg_.variant.weight_quant()) : 0, .conv_layout = conv},
                         {});
    weights_.emplace(role, v);
    return v;
  }
  // The weight of a projection from `in` to `total` in the projection form's layout (made before
  // its input where the graph's vertex order has the weight first: ids are part of the output).
  Vertex projection_weight(Role role, int64_t in, int64_t total) {
    return lg_.variant.projection() == ProjectionForm::kMatMul ? weight(role, {in, total}, true)
                                                               : weight(role, {total, in, 1, 1}, true, true);
  }
  // x [1, in] times columns [c0, c1) of the projection weight `role` ([in, total], c1 - c0 = total:
  // the whole weight) -> [1, c1 - c0]. projection=matmul: a MatMul (on a Slice of the weight
  // when part of it: per_head's own rows of a projection, folded by the converter into a
  // constant of its own). conv1x1: x viewed as [1, in, 1, 1], a 1x1 Conv by the weight laid out
  // [total, in, 1, 1] (sliced along its output axis), viewed back as [1, c1 - c0].
  Vertex linear(const std::string& name, Vertex x, Role role, int64_t total, int64_t c0, int64_t c1) {
    const int64_t in = shape(x).back();
    const bool part = c1 - c0 != total;
    if (lg_.variant.projection() == ProjectionForm::kMatMul) {
      Vertex w = projection_weight(role, in, total);
      if (part) w = slice(name + "/w_slice", w, -1, c0, c1);
      return matmul(name, x, w);
    }
    Vertex w = projection_weight(role, in, total);
    if (part) w = slice(name + "/w_slice", w, 0, c0, c1);
    auto it = nchw_.find(x);
    if (it == nchw_.end()) it = nchw_.emplace(x, reshape(lg_.graph[x].name + "/nchw", x, {1, in, 1, 1})).first;
    Vertex y = add({.name = name, .kind = OpKind::kConv, .shape = {1, c1 - c0, 1, 1}, .dtype = act_}, {it->second, w});
    return reshape(name + "/flat", y, {1, c1 - c0});
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
    return projection(name, x, w, out, 0, out, bias);
  }
  // Columns [c0, c1) of a projection of `total` outputs, with that part of its bias.
  Vertex projection(const std::string& name, Vertex x, Role w, int64_t total, int64_t c0, int64_t c1, Role bias) {
    Vertex y = linear(name, x, w, total, c0, c1);
    if (bias != Role::kNone) {
      Vertex b = weight(bias, {total}, false);
      if (c1 - c0 != total) b = slice(name + "/bias_slice", b, -1, c0, c1);
      y = binary(OpKind::kAdd, name + "/bias", y, b);
    }
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
  // heads=per_head's attention (below build()): from the normed input to the merged
  // heads [1, heads head_dim]; sets what the K/V outputs hand back.
  struct PerHead {
    Vertex merged, k_out, v_out;
  };
  PerHead attention_per_head(Vertex xn, Vertex k_cache, Vertex v_cache, Vertex mask, Vertex cos, Vertex sin);
  // One KV head's key (normed, rotated) and value, their cache slices, the new entries as the
  // cache holds them, and (join=keys or roll) cache + entry.
  struct KvHead {
    Vertex k, k_new_t, v, k_cache, v_cache, k_entry, v_entry, k_all, v_all;
  };
  // Head h's D outputs of a projection [1, 1, D]: of the fused QKV weight at `offset` heads, or
  // of its own weight of `heads` heads (with that part of its bias).
  Vertex head_projection(const std::string& name, Vertex xn, Role own, Role bias, int64_t heads, int64_t offset,
                         int64_t h);
  // Query head i over its KV head's tensors: its weighted values [1, 1, D].
  Vertex query_head(int64_t i, const KvHead& e, Vertex xn, Vertex mask, Vertex cos, Vertex sin, Vertex scale,
                    Vertex gate);
  // Tensors of the same shape side by side along `axis` (one: itself).
  Vertex concat_heads(const std::string& name, const std::vector<Vertex>& xs, int axis);
  Vertex attention_out_and_mlp(Vertex x, Vertex xn, Vertex context);

  LayerGraph& lg_;
  DType act_;
  DType wdt_;
  DType cdt_;  // the K/V caches' boundary dtype (kv_dtype)
  std::map<Role, Vertex> weights_;  // each role's weight vertex (weight())
  std::map<Vertex, Vertex> nchw_;   // projection=conv1x1: an activation's [1, C, 1, 1] view
};

void Builder::build() {
  const LayerSpec& L = lg_.layer;
  const Variant& V = lg_.variant;
  const int64_t H = L.hidden, nh = L.heads, kv = L.kv_heads, G = L.group(), D = L.head_dim,
                N = L.cache_entries, r = L.rope.rotary_dims;

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
  if (V.heads() == HeadsForm::kPerHead) {
    const PerHead ph = attention_per_head(xn, k_cache, v_cache, mask, cos, sin);
    output(Role::kHiddenOut, attention_out_and_mlp(x, xn, ph.merged));
    cache_output(Role::kKOut, ph.k_out);
    cache_output(Role::kVOut, ph.v_out);
    return;
  }
  Vertex q, k, v_new;
  if (S.qkv_fused) {
    Vertex qkv = linear("attn/qkv_proj", xn, Role::kQkv, (nh + 2 * kv) * D, 0, (nh + 2 * kv) * D);
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
    Vertex g = linear("attn/head_gate_proj", xn, Role::kHeadGate, nh, 0, nh);
    g = reshape("attn/head_gate_heads", unary(OpKind::kSigmoid, "attn/head_gate_sigmoid", g), {kv, G, 1});
    context = binary(OpKind::kMul, "attn/head_gate_mul", context, g);
  }
  Vertex y = attention_out_and_mlp(x, xn, context);

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

// heads=per_head, as the exporters' MHA-to-SHA passes write attention (executorch
// convert_mha_to_sha; AI Hub's model adaptations, prepare_sha/forward_sha: one Conv2d per query
// head over its rows of q_proj, one per KV head for k and v, RoPE per head, each KV head's
// cache concatenated with its new entry, scores/softmax/values per query head, the heads
// concatenated before one o_proj): query head i (KV head j = i / G) gets its own projection
// MatMuls (or 1x1 Convs) over its rows of the weights, its own norm, RoPE, scores, softmax and
// weighted values, on [1, 1, D] tensors. A KV head's key and value are projected once and shared
// by its G query heads. The 1/sqrt(D) scale is on q as in the grouped graph (AI Hub divides K).
// Unlike the exporters, whose caches are one graph input and output per KV head, the caches
// stay one tensor per layer at the boundary (the runtime's and ORT driver's I/O, bound by
// role), each KV head's part a Slice of it; the new entries (or rolled windows) are
// concatenated back along the head axis for the outputs.
Builder::PerHead Builder::attention_per_head(Vertex xn, Vertex k_cache, Vertex v_cache, Vertex mask, Vertex cos,
                                             Vertex sin) {
  const LayerSpec& L = lg_.layer;
  const Variant& V = lg_.variant;
  const int64_t nh = L.heads, kv = L.kv_heads, G = L.group(), D = L.head_dim, N = L.cache_entries;
  const bool k_rows = V.k_layout() == KLayout::kRows;
  const int k_slot_axis = k_rows ? 1 : 2;
  const Vertex scale = constant(
      "attn/scale", L.structure.query_scale > 0 ? L.structure.query_scale : 1.0 / std::sqrt(static_cast<double>(D)));

  // Every op a chain adds is marked with how many such chains run beside it (OpNode::chains).
  auto mark_chain = [&](size_t from, int64_t chains) {
    for (size_t u = from; u < lg_.size(); ++u) {
      OpNode& n = lg_.graph[static_cast<Vertex>(u)];
      if (n.kind != OpKind::kWeight && n.kind != OpKind::kConstant && n.kind != OpKind::kInput)
        n.chains = static_cast<int>(chains);
    }
  };
  std::vector<KvHead> kvh(static_cast<size_t>(kv));
  for (int64_t j = 0; j < kv; ++j) {
    const size_t first = lg_.size();
    const std::string p = "attn/kv" + std::to_string(j) + "/";
    KvHead& e = kvh[static_cast<size_t>(j)];
    e.k = head_projection(p + "k_proj", xn, Role::kKProj, Role::kKBias, kv, nh, j);
    e.v = head_projection(p + "v_proj", xn, Role::kVProj, Role::kVBias, kv, nh + kv, j);
    if (L.structure.qk_norm) e.k = norm(p + "k_norm", e.k, Role::kKNorm);
    if (L.rope.rotary_dims > 0) e.k = rope(p + "k_rope", e.k, cos, sin);
    e.k_new_t = k_rows ? e.k : reshape(p + "k_new_t", e.k, {1, D, 1});
    e.k_cache = slice(p + "k_cache", k_cache, 0, j, j + 1);
    e.v_cache = slice(p + "v_cache", v_cache, 0, j, j + 1);
    e.k_entry = cache_entry(p + "k_new", e.k_new_t);
    e.v_entry = cache_entry(p + "v_new", e.v);
    if (V.join() == Join::kKeys || V.returns() == KvReturn::kWindow) {
      e.k_all = concat(p + "k_concat", {e.k_cache, e.k_entry}, k_slot_axis);
      e.v_all = concat(p + "v_concat", {e.v_cache, e.v_entry}, 1);
    }
    mark_chain(first, kv);
  }

  Vertex gate = Graph::null_vertex();  // one sigmoid per query head, [1, nh]
  if (L.head_gate)
    gate = unary(OpKind::kSigmoid, "attn/head_gate_sigmoid", linear("attn/head_gate_proj", xn, Role::kHeadGate, nh, 0, nh));
  std::vector<Vertex> contexts;
  for (int64_t i = 0; i < nh; ++i) {
    const size_t first = lg_.size();
    contexts.push_back(query_head(i, kvh[static_cast<size_t>(i / G)], xn, mask, cos, sin, scale, gate));
    mark_chain(first, nh);
  }

  PerHead ph;
  ph.merged = concat_heads("attn/heads_concat", contexts, -1);  // [1, 1, nh D]
  std::vector<Vertex> ks, vs;
  for (int64_t j = 0; j < kv; ++j) {
    const KvHead& e = kvh[static_cast<size_t>(j)];
    const std::string p = "cache/kv" + std::to_string(j) + "/";
    if (V.returns() == KvReturn::kWindow) {  // roll: each head's window without its oldest entry
      ks.push_back(slice(p + "k_window", e.k_all, k_slot_axis, 1, N + 1));
      vs.push_back(slice(p + "v_window", e.v_all, 1, 1, N + 1));
    } else {
      ks.push_back(e.k_entry);
      vs.push_back(e.v_entry);
    }
  }
  ph.k_out = concat_heads("cache/k_heads", ks, 0);
  ph.v_out = concat_heads("cache/v_heads", vs, 0);
  return ph;
}

Vertex Builder::head_projection(const std::string& name, Vertex xn, Role own, Role bias, int64_t heads, int64_t offset,
                                int64_t h) {
  const LayerSpec& L = lg_.layer;
  const int64_t D = L.head_dim;
  const Vertex y =
      L.structure.qkv_fused
          ? linear(name, xn, Role::kQkv, (L.heads + 2 * L.kv_heads) * D, (offset + h) * D, (offset + h + 1) * D)
          : projection(name, xn, own, heads * D, h * D, (h + 1) * D, L.structure.qkv_bias ? bias : Role::kNone);
  return reshape(name + "/head", y, {1, 1, D});
}

Vertex Builder::query_head(int64_t i, const KvHead& e, Vertex xn, Vertex mask, Vertex cos, Vertex sin, Vertex scale,
                           Vertex gate) {
  const LayerSpec& L = lg_.layer;
  const LayerStructure& S = L.structure;
  const Variant& V = lg_.variant;
  const int64_t N = L.cache_entries;
  const bool k_rows = V.k_layout() == KLayout::kRows;
  const std::string p = "attn/h" + std::to_string(i) + "/";
  Vertex q = head_projection(p + "q_proj", xn, Role::kQProj, Role::kQBias, L.heads, 0, i);
  if (S.qk_norm) q = norm(p + "q_norm", q, Role::kQNorm);
  if (L.rope.rotary_dims > 0) q = rope(p + "q_rope", q, cos, sin);
  q = binary(OpKind::kMul, p + "q_scale", q, scale);
  Vertex scores;
  if (V.join() == Join::kKeys) {
    scores = matmul(p + "scores", q, e.k_all, k_rows);  // [1,1,N+1]
  } else {
    Vertex s_cache = matmul(p + "scores_cache", q, e.k_cache, k_rows);
    Vertex s_new = V.new_score() == NewScore::kMatMul
                       ? matmul(p + "score_new", q, e.k_new_t, k_rows)
                       : reduce(OpKind::kReduceSum, p + "score_new", binary(OpKind::kMul, p + "score_new_mul", q, e.k), -1);
    scores = concat(p + "scores", {s_cache, s_new}, -1);
  }
  if (S.attn_softcap > 0) {
    Vertex t = unary(OpKind::kTanh, p + "softcap_tanh",
                     binary(OpKind::kMul, p + "softcap_div", scores, constant(p + "softcap_inv", 1.0 / S.attn_softcap)));
    scores = binary(OpKind::kMul, p + "softcap", t, constant(p + "softcap_c", S.attn_softcap));
  }
  Vertex probs = V.softmax() == SoftmaxForm::kMasked
                     ? add({.name = p + "softmax", .kind = OpKind::kSoftmax,
                            .shape = broadcast(shape(scores), shape(mask), p + "softmax"), .dtype = act_, .axis = -1},
                           {scores, mask})
                     : softmax(p + "softmax", binary(OpKind::kAdd, p + "mask_add", scores, mask));
  Vertex context;
  if (V.join() == Join::kKeys) {
    context = matmul(p + "context", probs, e.v_all);
  } else {
    Vertex c_cache = matmul(p + "context_cache", slice(p + "probs_cache", probs, -1, 0, N), e.v_cache);
    Vertex p_new = slice(p + "prob_new", probs, -1, N, N + 1);
    Vertex c_new = V.new_value() == NewValue::kMatMul ? matmul(p + "context_new", p_new, e.v)
                                                     : binary(OpKind::kMul, p + "context_new", p_new, e.v);
    context = binary(OpKind::kAdd, p + "context", c_cache, c_new);
  }
  if (L.head_gate) context = binary(OpKind::kMul, p + "head_gate_mul", context, slice(p + "head_gate", gate, -1, i, i + 1));
  return context;
}

Vertex Builder::concat_heads(const std::string& name, const std::vector<Vertex>& xs, int axis) {
  if (xs.size() == 1) return xs[0];
  Vertex v = add({.name = name, .kind = OpKind::kConcat, .shape = shape(xs[0]), .dtype = lg_.graph[xs[0]].dtype,
                  .axis = axis},
                 std::span<const Vertex>(xs));
  Shape& out = lg_.graph[v].shape;
  out[norm_axis(axis, out.size())] *= static_cast<int64_t>(xs.size());
  return v;
}

// The heads' context (any shape of nh D elements) merged, the output projection, the family's
// post-attention norms and the MLP, to the layer's output [1, hidden].
Vertex Builder::attention_out_and_mlp(Vertex x, Vertex xn, Vertex context) {
  const LayerSpec& L = lg_.layer;
  const LayerStructure& S = L.structure;
  const Variant& V = lg_.variant;
  const int64_t H = L.hidden, nh = L.heads, D = L.head_dim, I = L.intermediate;
  projection_weight(Role::kOutProj, nh * D, H);  // vertex order as before the projection forms
  Vertex attn = linear("attn/out_proj", reshape("attn/merge_heads", context, {1, nh * D}), Role::kOutProj, H, 0, H);
  if (S.sandwich_norms) attn = norm("attn/output_norm", attn, Role::kAttnPostNorm);

  // Gated MLP: down(act(gate(x)) * up(x)), from the residual stream after attention, or (a
  // parallel block, Cohere) from the attention's own normed input: y = (x + attn) + mlp(xn).
  Vertex h = binary(OpKind::kAdd, "attn/residual", x, attn);
  Vertex hn = S.parallel_block ? xn : norm("mlp/post_norm", h, Role::kPostNorm);
  Vertex gate = linear("mlp/gate_proj", hn, Role::kMlpGate, I, 0, I);
  Vertex up = linear("mlp/up_proj", hn, Role::kMlpUp, I, 0, I);
  Vertex a;
  if (L.activation == Activation::kSilu) {
    a = binary(OpKind::kMul, "mlp/act", gate, unary(OpKind::kSigmoid, "mlp/act_sigmoid", gate));
  } else {
    a = add({.name = "mlp/act", .kind = OpKind::kGelu, .shape = shape(gate), .dtype = act_, .gelu = V.gelu()},
            {gate});
  }
  projection_weight(Role::kMlpDown, I, H);
  Vertex down = linear("mlp/down_proj", binary(OpKind::kMul, "mlp/gate_mul", a, up), Role::kMlpDown, H, 0, H);
  if (S.sandwich_norms) down = norm("mlp/output_norm", down, Role::kMlpPostNorm);
  return binary(OpKind::kAdd, "mlp/residual", h, down);
}

}  // namespace

LayerSpec built_layer(const LayerSpec& layer, const Variant& variant) {
  LayerSpec built = layer;
  // sliding_cache=context: a sliding layer whose cache holds its window (window-1 slots) takes a
  // full layer's context-1 slots instead; the runtime's mask hides what is older than the window
  // (kv_cache.h kv_slot_open). A cache of another size (the checkpoints' one-entry graphs) is kept.
  if (variant.sliding_cache() == SlidingCache::kContext && layer.type == LayerType::kSliding &&
      layer.cache_entries == layer.window - 1 && layer.context - 1 > layer.cache_entries)
    built.cache_entries = layer.context - 1;
  return built;
}

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
  LayerGraph lg{Graph(), built_layer(layer, variant), variant};
  Builder(lg).build();
  return lg;  // named return value: not copied
}

}  // namespace layoutx::model
