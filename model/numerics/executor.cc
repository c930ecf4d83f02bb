#include "model/numerics/executor.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "model/numerics/buffer_pool.h"
#include "model/numerics/float16.h"
#include "model/numerics/quantize.h"
#include "support/error.h"

namespace layoutx::model::numerics {

namespace {

int norm_axis(const OpNode& n, size_t rank) {
  const int a = n.axis < 0 ? n.axis + static_cast<int>(rank) : n.axis;
  if (a < 0 || a >= static_cast<int>(rank))
    throw Error("executor: op '" + n.name + "': axis " + std::to_string(n.axis) + " outside rank " +
                std::to_string(rank));
  return a;
}

// numpy broadcasting of two shapes; throws naming the op.
Shape broadcast_shape(const Shape& a, const Shape& b, const std::string& op) {
  const size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i + a.size() >= r ? a[i + a.size() - r] : 1;
    const int64_t db = i + b.size() >= r ? b[i + b.size() - r] : 1;
    if (da != db && da != 1 && db != 1)
      throw Error("executor: op '" + op + "': shapes " + to_string(a) + " and " + to_string(b) + " do not broadcast");
    out[i] = std::max(da, db);
  }
  return out;
}

// Strides of `s` aligned to an output of rank `rank`, 0 on broadcast axes.
std::vector<int64_t> broadcast_strides(const Shape& s, const Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  const auto own = strides_of(s);
  const size_t off = out.size() - s.size();
  for (size_t i = 0; i < s.size(); ++i) st[off + i] = s[i] == 1 ? 0 : own[i];
  return st;
}

// Calls f(out_index, a_offset, b_offset) for every element of `out` in row-major order.
template <typename F>
void for_each_broadcast(const Shape& out, const std::vector<int64_t>& sa, const std::vector<int64_t>& sb, F f) {
  const size_t r = out.size();
  const int64_t total = numel(out);
  if (total == 0) return;
  if (r == 0) {
    f(0, 0, 0);
    return;
  }
  std::vector<int64_t> idx(r, 0);
  int64_t oa = 0, ob = 0;
  const int64_t inner = out[r - 1], ia = sa[r - 1], ib = sb[r - 1];
  for (int64_t o = 0; o < total; o += inner) {
    for (int64_t j = 0; j < inner; ++j) f(o + j, oa + j * ia, ob + j * ib);
    // Advance the odometer over the outer axes.
    for (size_t k = r - 1; k-- > 0;) {
      oa += sa[k];
      ob += sb[k];
      if (++idx[k] < out[k]) break;
      oa -= sa[k] * out[k];
      ob -= sb[k] * out[k];
      idx[k] = 0;
    }
  }
}

// outer x len x inner decomposition of a shape around one axis.
struct AxisSplit {
  int64_t outer = 1, len = 1, inner = 1;
};
AxisSplit split_at(const Shape& s, int axis) {
  AxisSplit a;
  for (int i = 0; i < axis; ++i) a.outer *= s[i];
  a.len = s[axis];
  for (size_t i = axis + 1; i < s.size(); ++i) a.inner *= s[i];
  return a;
}

template <typename T>
T gelu(T x, GeluForm form) {
  switch (form) {
    case GeluForm::kErf: return T(0.5) * x * (T(1) + std::erf(x / std::sqrt(T(2))));
    case GeluForm::kTanh: {
      const T c = std::sqrt(T(2) / T(3.14159265358979323846));
      return T(0.5) * x * (T(1) + std::tanh(c * (x + T(0.044715) * x * x * x)));
    }
  }
  return x;
}

}  // namespace

template <typename T>
Executor<T>::Executor(const LayerGraph& graph, const LayerWeights& weights, ExecOptions options)
    : graph_(graph),
      options_(options),
      owned_weights_(std::make_unique<PreparedWeights<T>>(weights, options.simulate_precision)),
      weights_(owned_weights_.get()) {
  init();
}

template <typename T>
Executor<T>::Executor(const LayerGraph& graph, PreparedWeights<T>& weights, ExecOptions options)
    : graph_(graph), options_(options), weights_(&weights) {
  init();
}

template <typename T>
Executor<T>::~Executor() {
  for (Tensor<T>& t : own_) BufferPool<T>::give(std::move(t.data));
}

template <typename T>
void Executor<T>::size_for_overwrite(Tensor<T>& t, size_t n) {
  if (t.data.size() == n) return;
  BufferPool<T>::give(std::move(t.data));
  t.data = BufferPool<T>::take(n);
}

template <typename T>
void Executor<T>::init() {
  auto simulated = [](bool on) { return on ? "with the precision simulated" : "without precision simulation"; };
  if (weights_->simulate_precision() != options_.simulate_precision)
    throw Error(std::string("executor: weights prepared ") + simulated(weights_->simulate_precision()) +
                " for an executor running " + simulated(options_.simulate_precision));
  const LayerWeights& source = weights_->source();
  order_ = graph_.topological_order();
  const size_t n = graph_.size();
  operands_.resize(n);
  own_.resize(n);
  ptr_.assign(n, nullptr);
  users_.assign(n, 0);
  half_exact_.assign(n, false);
  range_.assign(n, nullptr);
  record_.assign(n, nullptr);
  needed_.assign(n, true);
  ErrorList errors;
  for (Vertex v : order_) {
    const Operands ops = graph_.operands(v);
    operands_[v].assign(ops.begin(), ops.end());
    for (Vertex u : ops) ++users_[u];
    const OpNode& node = graph_.op(v);
    // Activations: computed u16 values (not weights, constants or boundary inputs, whose
    // encodings come from their own values).
    // u8 K/V entries (kv_dtype=u8) too: their recorded range is the cache's tied encoding.
    const bool activation = (node.dtype == DType::kU16 || node.dtype == DType::kU8) && node.kind != OpKind::kWeight &&
                            node.kind != OpKind::kConstant && node.kind != OpKind::kInput;
    if (activation && options_.ranges) {
      auto it = options_.ranges->find(node.name);
      if (it != options_.ranges->end()) range_[v] = &it->second;
    }
    if (activation && options_.record) record_[v] = &(*options_.record)[node.name];
    const bool moves_data = node.kind == OpKind::kSlice || node.kind == OpKind::kReshape;
    half_exact_[v] = moves_data ? !ops.empty() && half_exact_[ops[0]] : node.dtype == DType::kF16;
    if (node.kind == OpKind::kOutput) outputs_.emplace_back(node.role, v);
    if (node.kind == OpKind::kWeight) {
      auto it = source.find(node.role);
      if (it == source.end()) {
        errors.add(std::string("executor: weight ") + role_name(node.role) + " is missing");
        continue;
      }
      // projection=conv1x1: the role's [in, out] tensor, bound transposed as [out, in, 1, 1].
      Shape stored = node.shape;
      if (node.conv_layout && node.shape.size() == 4) {
        stored.resize(2);
        stored[0] = node.shape[1];
        stored[1] = node.shape[0];
      }
      if (it->second.shape != stored) {
        errors.add(std::string("executor: weight ") + role_name(node.role) + " has shape " +
                   to_string(it->second.shape) + ", the graph needs " + to_string(stored));
        continue;
      }
      // A block-quantized weight (weight_quant=blockN) by its own block; per-channel 4-bit weights
      // by the question's quantizer (--quantizer, LPBQ block 64 by default: the fidelity check's
      // choice before the axis existed, kept so today's figures stay as they were).
      const WeightQuantizer q = node.block > 0 ? quantizer_of_block(node.block) : options_.quantizer;
      ptr_[v] = &weights_->get(node.role, node.dtype, q);  // shared, prepared once
      if (node.conv_layout) {
        // Quantized as the [in, out] form (per output column, blocks down the input rows), then
        // transposed: the same values a MatMul of the role would use.
        const Tensor<T>& w = *ptr_[v];
        const int64_t in = stored[0], out = stored[1];
        own_[v] = Tensor<T>(node.shape);
        for (int64_t r = 0; r < in; ++r)
          for (int64_t c = 0; c < out; ++c) own_[v][c * in + r] = w[r * out + c];
        ptr_[v] = &own_[v];
      }
    } else if (node.kind == OpKind::kConstant) {
      own_[v] = Tensor<T>(node.shape, static_cast<T>(node.scalar));
      simulate_dtype(v, own_[v]);
      ptr_[v] = &own_[v];
    }
  }
  errors.throw_if_any();
}

template <typename T>
void Executor<T>::keep_only(std::initializer_list<Role> keep) {
  std::fill(needed_.begin(), needed_.end(), false);
  std::vector<Vertex> todo;
  for (Role role : keep) {
    auto it = std::find_if(outputs_.begin(), outputs_.end(), [&](const auto& o) { return o.first == role; });
    if (it == outputs_.end()) throw Error(std::string("executor: the graph has no output ") + role_name(role));
    todo.push_back(it->second);
  }
  while (!todo.empty()) {
    const Vertex v = todo.back();
    todo.pop_back();
    if (needed_[v]) continue;
    needed_[v] = true;
    for (Vertex u : operands_[v]) todo.push_back(u);
  }
}

template <typename T>
bool Executor<T>::changes_values(Vertex v) const {
  const OpNode& n = graph_.op(v);
  if (!options_.simulate_precision)
    return options_.simulate_cache_codes && n.dtype == DType::kU8 && n.kind == OpKind::kConvert;
  // u8 (kv_dtype=u8) is the caches' encoding: set where a value enters it (a Convert, an
  // unbound-dtype input); joins, windows and outputs move its codes without re-encoding.
  if (n.dtype == DType::kU8) return n.kind == OpKind::kConvert || n.kind == OpKind::kInput;
  return n.dtype == DType::kF16 || n.dtype == DType::kU16;
}

template <typename T>
void Executor<T>::simulate_dtype(Vertex v, const T* src, T* dst, size_t n) const {
  if (!changes_values(v)) {
    if (src != dst) std::copy_n(src, n, dst);
  } else if (graph_.op(v).dtype == DType::kU8) {
    quantize_u8_symmetric(src, dst, n, range_[v]);
  } else if (graph_.op(v).dtype == DType::kF16) {
    round_to_half(src, dst, n);
  } else if (range_[v]) {
    quantize_u16_with_range(src, dst, n, *range_[v]);
  } else {
    quantize_u16(src, dst, n);
  }
}

template <typename T>
void Executor<T>::step(const RoleTensors<T>& inputs, std::initializer_list<Role> in_dtype) {
  for (Vertex v : order_) {
    const OpNode& node = graph_.op(v);
    if (node.kind == OpKind::kWeight || node.kind == OpKind::kConstant) continue;  // prepared once
    if (!needed_[v]) continue;
    if (node.kind == OpKind::kInput) {
      bind_input(v, inputs, std::find(in_dtype.begin(), in_dtype.end(), node.role) != in_dtype.end());
      continue;
    }
    eval(v);
    if (own_[v].shape != node.shape)
      throw Error("executor: op '" + node.name + "' computed shape " + to_string(own_[v].shape) +
                  ", the graph says " + to_string(node.shape));
    ptr_[v] = &own_[v];
    if (recording_ && record_[v]) {
      const U16Range r = u16_range(own_[v].data.data(), own_[v].data.size());
      record_[v]->extend(r.lo);
      record_[v]->extend(r.hi);
    }
  }
}

template <typename T>
void Executor<T>::bind_input(Vertex v, const RoleTensors<T>& inputs, bool in_dtype) {
  const OpNode& node = graph_.op(v);
  auto it = inputs.find(node.role);
  if (it == inputs.end()) throw Error(std::string("executor: input ") + role_name(node.role) + " is not bound");
  const Tensor<T>& in = it->second;
  if (in.shape != node.shape)
    throw Error(std::string("executor: input ") + role_name(node.role) + " has shape " + to_string(in.shape) +
                ", the graph needs " + to_string(node.shape));
  // Read in place when the dtype leaves the values as they are: the caller says so, or they
  // are float16 values already (rounding is idempotent).
  if (in_dtype || !changes_values(v) ||
      (node.dtype == DType::kF16 && is_half_exact(in.data.data(), in.data.size()))) {
    ptr_[v] = &in;
    return;
  }
  Tensor<T>& own = own_[v];
  own.shape = in.shape;
  size_for_overwrite(own, in.data.size());
  simulate_dtype(v, in.data.data(), own.data.data(), in.data.size());
  ptr_[v] = &own;
}

template <typename T>
RoleTensors<T> Executor<T>::run(const RoleTensors<T>& inputs) {
  step(inputs);
  return outputs();
}

template <typename T>
RoleTensors<T> Executor<T>::outputs() const {
  RoleTensors<T> out;
  for (const auto& [role, v] : outputs_) out[role] = own_[v];
  return out;
}

template <typename T>
Tensor<T>& Executor<T>::output(Role role) {
  for (const auto& [r, v] : outputs_)
    if (r == role) return own_[v];
  throw Error(std::string("executor: the graph has no output ") + role_name(role));
}

// Convert, Output and Reshape: the operand's values, in v's dtype (Convert, Output) or shape
// (Reshape; data movement keeps its operand's values). When v is the operand's only reader and
// the operand's value lives in own_ for this step only (not a bound input, weight or constant),
// v takes its buffer instead of copying (the operand gets v's old buffer, which its next
// evaluation overwrites). An f16 value converted to f16 again is
// not rounded again (rounding is idempotent).
template <typename T>
void Executor<T>::pass_through(Vertex v) {
  const OpNode& n = graph_.op(v);
  if (operands_[v].size() != 1)
    throw Error("executor: op '" + n.name + "' has " + std::to_string(operands_[v].size()) + " operands, " +
                to_string(n.kind) + " takes 1");
  const Vertex u = operands_[v][0];
  const Tensor<T>& a = value(u);
  const bool reshape = n.kind == OpKind::kReshape;
  if (reshape && numel(n.shape) != a.size())
    throw Error("executor: op '" + n.name + "': cannot reshape " + to_string(a.shape) + " to " + to_string(n.shape));
  const bool simulate = !reshape && changes_values(v) && !(n.dtype == DType::kF16 && half_exact_[u]);
  Tensor<T>& out = own_[v];
  out.shape = reshape ? n.shape : a.shape;
  const bool per_step = graph_.op(u).kind != OpKind::kConstant &&
                        graph_.op(u).kind != OpKind::kWeight;  // a constant's (a conv weight's) own_ persists
  if (users_[u] == 1 && per_step && ptr_[u] == &own_[u]) {
    std::swap(out.data, own_[u].data);
    if (simulate) simulate_dtype(v, out);
  } else {
    size_for_overwrite(out, a.data.size());
    if (simulate) simulate_dtype(v, a.data.data(), out.data.data(), a.data.size());
    else std::copy(a.data.begin(), a.data.end(), out.data.begin());
  }
}

template <typename T>
void Executor<T>::eval(Vertex v) {
  const OpNode& n = graph_.op(v);
  const auto& ops = operands_[v];
  Tensor<T>& out = own_[v];
  auto arity = [&](size_t k) {
    if (ops.size() != k)
      throw Error("executor: op '" + n.name + "' has " + std::to_string(ops.size()) + " operands, " + to_string(n.kind) +
                  " takes " + std::to_string(k));
  };
  auto unary = [&](auto f) {
    arity(1);
    const Tensor<T>& a = value(ops[0]);
    out.shape = a.shape;
    size_for_overwrite(out, a.data.size());
    for (size_t i = 0; i < a.data.size(); ++i) out.data[i] = f(a.data[i]);
  };
  auto binary = [&](auto f) {
    arity(2);
    const Tensor<T>& a = value(ops[0]);
    const Tensor<T>& b = value(ops[1]);
    out.shape = broadcast_shape(a.shape, b.shape, n.name);
    size_for_overwrite(out, static_cast<size_t>(numel(out.shape)));
    if (a.shape == b.shape) {
      for (size_t i = 0; i < out.data.size(); ++i) out.data[i] = f(a.data[i], b.data[i]);
      return;
    }
    const T* pa = a.data.data();
    const T* pb = b.data.data();
    T* po = out.data.data();
    for_each_broadcast(out.shape, broadcast_strides(a.shape, out.shape), broadcast_strides(b.shape, out.shape),
                       [&](int64_t o, int64_t ia, int64_t ib) { po[o] = f(pa[ia], pb[ib]); });
  };
  // Reduction over n.axis (keepdims): f(first, len, stride) -> value.
  auto reduce = [&](auto f) {
    arity(1);
    const Tensor<T>& a = value(ops[0]);
    const int ax = norm_axis(n, a.shape.size());
    const AxisSplit s = split_at(a.shape, ax);
    out.shape = a.shape;
    out.shape[ax] = 1;
    size_for_overwrite(out, static_cast<size_t>(s.outer * s.inner));
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i) out[o * s.inner + i] = f(a.data.data() + o * s.len * s.inner + i, s.len, s.inner);
  };

  switch (n.kind) {
    case OpKind::kInput:
    case OpKind::kWeight:
    case OpKind::kConstant:
      throw Error("executor: op '" + n.name + "': " + to_string(n.kind) + " has no computation");
    case OpKind::kOutput:
    case OpKind::kConvert:
    case OpKind::kReshape:
      pass_through(v);
      return;
    case OpKind::kSlice: {
      arity(1);
      const Tensor<T>& a = value(ops[0]);
      const int ax = norm_axis(n, a.shape.size());
      if (n.start < 0 || n.end > a.shape[ax] || n.start > n.end)
        throw Error("executor: op '" + n.name + "': slice [" + std::to_string(n.start) + ", " + std::to_string(n.end) +
                    ") outside axis " + std::to_string(n.axis) + " of " + to_string(a.shape));
      const AxisSplit s = split_at(a.shape, ax);
      const int64_t len = n.end - n.start;
      out.shape = a.shape;
      out.shape[ax] = len;
      size_for_overwrite(out, static_cast<size_t>(s.outer * len * s.inner));
      for (int64_t o = 0; o < s.outer; ++o)
        std::copy_n(a.data.begin() + (o * s.len + n.start) * s.inner, len * s.inner,
                    out.data.begin() + o * len * s.inner);
      return;  // data movement: shares its operand's encoding
    }
    case OpKind::kConcat: {
      if (ops.empty()) throw Error("executor: op '" + n.name + "': Concat without operands");
      const Tensor<T>& a0 = value(ops[0]);
      const int ax = norm_axis(n, a0.shape.size());
      out.shape = a0.shape;
      out.shape[ax] = 0;
      for (Vertex u : ops) {
        const Shape& s = value(u).shape;
        for (size_t i = 0; i < s.size(); ++i)
          if (s.size() != a0.shape.size() || (static_cast<int>(i) != ax && s[i] != a0.shape[i]))
            throw Error("executor: op '" + n.name + "': cannot concatenate " + to_string(a0.shape) + " and " +
                        to_string(s) + " along axis " + std::to_string(n.axis));
        out.shape[ax] += s[ax];
      }
      const AxisSplit so = split_at(out.shape, ax);
      size_for_overwrite(out, static_cast<size_t>(numel(out.shape)));
      int64_t at = 0;  // offset along the axis
      for (Vertex u : ops) {
        const Tensor<T>& a = value(u);
        const AxisSplit s = split_at(a.shape, ax);
        for (int64_t o = 0; o < s.outer; ++o)
          std::copy_n(a.data.begin() + o * s.len * s.inner, s.len * s.inner,
                      out.data.begin() + (o * so.len + at) * so.inner);
        at += s.len;
      }
      break;
    }
    case OpKind::kRmsNorm: {
      arity(2);
      const Tensor<T>& x = value(ops[0]);
      const Tensor<T>& w = value(ops[1]);
      const int64_t d = x.shape.empty() ? 1 : x.shape.back();
      if (w.size() != d)
        throw Error("executor: op '" + n.name + "': norm weight " + to_string(w.shape) + " does not match " +
                    to_string(x.shape));
      out.shape = x.shape;
      size_for_overwrite(out, x.data.size());
      for (int64_t r = 0; r < x.size() / d; ++r) {
        const T* px = x.data.data() + r * d;
        T ss = 0;
        for (int64_t i = 0; i < d; ++i) ss += px[i] * px[i];
        const T inv = T(1) / std::sqrt(ss / T(d) + static_cast<T>(n.eps));
        const T off = static_cast<T>(n.norm_offset);
        for (int64_t i = 0; i < d; ++i) out[r * d + i] = px[i] * inv * (w[i] + off);
      }
      break;
    }
    case OpKind::kLayerNorm: {
      arity(2);
      const Tensor<T>& x = value(ops[0]);
      const Tensor<T>& w = value(ops[1]);
      const int64_t d = x.shape.empty() ? 1 : x.shape.back();
      if (w.size() != d)
        throw Error("executor: op '" + n.name + "': norm weight " + to_string(w.shape) + " does not match " +
                    to_string(x.shape));
      out.shape = x.shape;
      size_for_overwrite(out, x.data.size());
      for (int64_t r = 0; r < x.size() / d; ++r) {
        const T* px = x.data.data() + r * d;
        T mean = 0, var = 0;
        for (int64_t i = 0; i < d; ++i) mean += px[i];
        mean /= T(d);
        for (int64_t i = 0; i < d; ++i) var += (px[i] - mean) * (px[i] - mean);
        const T inv = T(1) / std::sqrt(var / T(d) + static_cast<T>(n.eps));
        for (int64_t i = 0; i < d; ++i) out[r * d + i] = (px[i] - mean) * inv * w[i];
      }
      break;
    }
    case OpKind::kMatMul: {
      arity(2);
      const Tensor<T>& a = value(ops[0]);
      const Tensor<T>& b = value(ops[1]);
      // transpose_b: b's last two axes swapped (b is [.., N, K]).
      const bool tb = n.transpose_b;
      if (a.shape.size() < 2 || b.shape.size() < 2 ||
          a.shape.back() != (tb ? b.shape.back() : b.shape[b.shape.size() - 2]))
        throw Error("executor: op '" + n.name + "': cannot multiply " + to_string(a.shape) + " by " + to_string(b.shape) +
                    (tb ? " transposed" : ""));
      const int64_t M = a.shape[a.shape.size() - 2], K = a.shape.back(),
                    N = tb ? b.shape[b.shape.size() - 2] : b.shape.back();
      const Shape ba(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
      const Shape batch = broadcast_shape(ba, bb, n.name);
      out.shape = batch;
      out.shape.push_back(M);
      out.shape.push_back(N);
      size_for_overwrite(out, static_cast<size_t>(numel(out.shape)));
      using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
      auto sa = broadcast_strides(ba, batch), sb = broadcast_strides(bb, batch);
      const T* pa = a.data.data();
      const T* pb = b.data.data();
      T* po = out.data.data();
      for_each_broadcast(batch, sa, sb, [&](int64_t o, int64_t ia, int64_t ib) {
        Eigen::Map<const RowMajor> ma(pa + ia * M * K, M, K);
        Eigen::Map<RowMajor> mo(po + o * M * N, M, N);
        if (tb) {
          Eigen::Map<const RowMajor> mb(pb + ib * K * N, N, K);
          mo.noalias() = ma * mb.transpose();
        } else {
          Eigen::Map<const RowMajor> mb(pb + ib * K * N, K, N);
          mo.noalias() = ma * mb;
        }
      });
      break;
    }
    case OpKind::kConv: {
      // 1x1 Conv: y[n, o, p] = sum_c w[o, c] x[n, c, p] over the pixels p of H W.
      arity(2);
      const Tensor<T>& x = value(ops[0]);
      const Tensor<T>& w = value(ops[1]);
      if (x.shape.size() != 4 || w.shape.size() != 4 || w.shape[2] != 1 || w.shape[3] != 1 || w.shape[1] != x.shape[1])
        throw Error("executor: op '" + n.name + "': cannot apply a 1x1 Conv of weight " + to_string(w.shape) + " to " +
                    to_string(x.shape));
      const int64_t batch = x.shape[0], C = x.shape[1], P = x.shape[2] * x.shape[3], O = w.shape[0];
      out.shape = {batch, O, x.shape[2], x.shape[3]};
      size_for_overwrite(out, static_cast<size_t>(numel(out.shape)));
      using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
      Eigen::Map<const RowMajor> mw(w.data.data(), O, C);
      for (int64_t b = 0; b < batch; ++b) {
        Eigen::Map<const RowMajor> mx(x.data.data() + b * C * P, C, P);
        Eigen::Map<RowMajor> mo(out.data.data() + b * O * P, O, P);
        mo.noalias() = mw * mx;
      }
      break;
    }
    case OpKind::kAdd: binary([](T x, T y) { return x + y; }); break;
    case OpKind::kSub: binary([](T x, T y) { return x - y; }); break;
    case OpKind::kMul: binary([](T x, T y) { return x * y; }); break;
    case OpKind::kDiv: binary([](T x, T y) { return x / y; }); break;
    case OpKind::kNeg: unary([](T x) { return -x; }); break;
    case OpKind::kSigmoid: unary([](T x) { return T(1) / (T(1) + std::exp(-x)); }); break;
    case OpKind::kExp: unary([](T x) { return std::exp(x); }); break;
    case OpKind::kTanh: unary([](T x) { return std::tanh(x); }); break;
    case OpKind::kGelu: unary([&](T x) { return gelu(x, n.gelu); }); break;
    case OpKind::kReduceMax:
      reduce([](const T* p, int64_t len, int64_t st) {
        T m = p[0];
        for (int64_t i = 1; i < len; ++i) m = std::max(m, p[i * st]);
        return m;
      });
      break;
    case OpKind::kReduceSum:
      reduce([](const T* p, int64_t len, int64_t st) {
        T s = 0;
        for (int64_t i = 0; i < len; ++i) s += p[i * st];
        return s;
      });
      break;
    case OpKind::kSoftmax: {
      // Masked (two operands): the scores plus the mask, in the op's own arithmetic (no encoding
      // of the sum: the add is folded into the softmax), then the softmax in place.
      if (ops.size() == 2) binary([](T x, T y) { return x + y; });
      else arity(1);
      const Tensor<T>& a = ops.size() == 2 ? out : value(ops[0]);
      const int ax = norm_axis(n, a.shape.size());
      const AxisSplit s = split_at(a.shape, ax);
      out.shape = a.shape;
      size_for_overwrite(out, a.data.size());
      for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t i = 0; i < s.inner; ++i) {
          const int64_t base = o * s.len * s.inner + i;
          T m = a[base];
          for (int64_t j = 1; j < s.len; ++j) m = std::max(m, a[base + j * s.inner]);
          T sum = 0;
          for (int64_t j = 0; j < s.len; ++j) sum += (out[base + j * s.inner] = std::exp(a[base + j * s.inner] - m));
          for (int64_t j = 0; j < s.len; ++j) out[base + j * s.inner] /= sum;
        }
      break;
    }
  }
  simulate_dtype(v, out);
}

template class Executor<float>;
template class Executor<double>;

}  // namespace layoutx::model::numerics
