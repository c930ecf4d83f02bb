#include "model/numerics/reference.h"

#include <Eigen/Core>
#include <cmath>

#include "support/error.h"
#include "support/progress.h"

namespace layoutx::model::numerics {

namespace {

using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// y = x W for W stored [in, out].
std::vector<double> linear(const std::vector<double>& x, const Tensor<double>& w) {
  const int64_t in = w.shape[0], out = w.shape[1];
  Eigen::Map<const RowMajor> mw(w.data.data(), in, out);
  Eigen::Map<const Eigen::RowVectorXd> mx(x.data(), in);
  std::vector<double> y(static_cast<size_t>(out));
  Eigen::Map<Eigen::RowVectorXd>(y.data(), out).noalias() = mx * mw;
  return y;
}

std::vector<double> rms_norm(const std::vector<double>& x, const Tensor<double>& w, double eps) {
  double ss = 0;
  for (double v : x) ss += v * v;
  const double inv = 1.0 / std::sqrt(ss / double(x.size()) + eps);
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * inv * w[static_cast<int64_t>(i)];
  return y;
}

// The family's norm of x (one row) with weight w.
std::vector<double> family_norm(const std::vector<double>& x, const Tensor<double>& w, double eps, NormKind kind) {
  const double n = double(x.size());
  std::vector<double> y(x.size());
  switch (kind) {
    case NormKind::kRms: return rms_norm(x, w, eps);
    case NormKind::kRmsOnePlus: {
      double ss = 0;
      for (double v : x) ss += v * v;
      const double inv = 1.0 / std::sqrt(ss / n + eps);
      for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * inv * (1.0 + w[static_cast<int64_t>(i)]);
      return y;
    }
    case NormKind::kLayer: {
      double mean = 0;
      for (double v : x) mean += v;
      mean /= n;
      double var = 0;
      for (double v : x) var += (v - mean) * (v - mean);
      const double inv = 1.0 / std::sqrt(var / n + eps);
      for (size_t i = 0; i < x.size(); ++i) y[i] = (x[i] - mean) * inv * w[static_cast<int64_t>(i)];
      return y;
    }
  }
  return y;
}

// Norms each of `count` head vectors of length d at p in place.
void norm_heads(double* p, int count, int d, const Tensor<double>& w, double eps, NormKind kind) {
  for (int h = 0; h < count; ++h) {
    std::vector<double> v(p + h * d, p + (h + 1) * d);
    v = family_norm(v, w, eps, kind);
    std::copy(v.begin(), v.end(), p + h * d);
  }
}

// Rotates the leading r dims of one head vector at `pos` (pairs i and i + r/2).
void rotate(double* v, const RopeSpec& rope, int64_t pos) {
  const int r = rope.rotary_dims;
  for (int i = 0; i < r / 2; ++i) {
    const double angle = double(pos) * rope_inv_freq(rope, i);
    const double c = std::cos(angle), s = std::sin(angle);
    const double a = v[i], b = v[i + r / 2];
    v[i] = a * c - b * s;
    v[i + r / 2] = b * c + a * s;
  }
}

double activation(double x, Activation act) {
  switch (act) {
    case Activation::kGelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case Activation::kGeluTanh:
      return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case Activation::kSilu: return x / (1.0 + std::exp(-x));
  }
  return x;
}

}  // namespace

ReferenceLayer::ReferenceLayer(const LayerSpec& layer, const LayerWeights& weights) : layer_(layer), w_(weights) {
  check_weights(layer, weights, "reference");
}

void ReferenceLayer::project(const std::vector<double>& x, std::vector<double>& xn, std::vector<double>& qkv) {
  const LayerSpec& L = layer_;
  const int nh = L.heads, kv = L.kv_heads, D = L.head_dim, r = L.rope.rotary_dims;
  const int64_t pos = static_cast<int64_t>(keys_.size());
  if (static_cast<int>(x.size()) != L.hidden) throw Error("reference: hidden state of the wrong size");

  // Attention block.
  const LayerStructure& S = L.structure;
  xn = family_norm(x, w_.at(Role::kInputNorm), L.rms_eps, S.norm);
  qkv.clear();
  if (S.qkv_fused) {
    qkv = linear(xn, w_.at(Role::kQkv));
  } else {
    // [q | k | v] from the separate projections (and their biases).
    const std::pair<Role, Role> parts[] = {
        {Role::kQProj, Role::kQBias}, {Role::kKProj, Role::kKBias}, {Role::kVProj, Role::kVBias}};
    for (auto [proj, bias] : parts) {
      auto y = linear(xn, w_.at(proj));
      if (S.qkv_bias)
        for (size_t i = 0; i < y.size(); ++i) y[i] += w_.at(bias)[static_cast<int64_t>(i)];
      qkv.insert(qkv.end(), y.begin(), y.end());
    }
  }
  double* q = qkv.data();
  double* k = q + nh * D;
  double* v = k + kv * D;
  if (S.qk_norm) {
    norm_heads(q, nh, D, w_.at(Role::kQNorm), L.rms_eps, S.norm);
    norm_heads(k, kv, D, w_.at(Role::kKNorm), L.rms_eps, S.norm);
  }
  if (r > 0) {
    for (int h = 0; h < nh; ++h) rotate(q + h * D, L.rope, pos);
    for (int h = 0; h < kv; ++h) rotate(k + h * D, L.rope, pos);
  }
  keys_.emplace_back(k, k + kv * D);
  values_.emplace_back(v, v + kv * D);
}

void ReferenceLayer::append(const std::vector<double>& x) {
  std::vector<double> xn, qkv;
  project(x, xn, qkv);
}

std::vector<double> ReferenceLayer::step(const std::vector<double>& x) {
  const LayerSpec& L = layer_;
  const int nh = L.heads, D = L.head_dim, G = L.group();
  const int64_t pos = static_cast<int64_t>(keys_.size());
  const LayerStructure& S = L.structure;
  std::vector<double> xn, qkv;
  project(x, xn, qkv);
  const double* q = qkv.data();

  // Keys this query sees: sliding, the last W positions including its own; full, all.
  const int64_t first = L.type == LayerType::kSliding ? std::max<int64_t>(0, pos - L.window + 1) : 0;
  std::vector<double> gate(static_cast<size_t>(nh), 1.0);
  if (L.head_gate) {
    gate = linear(xn, w_.at(Role::kHeadGate));
    for (auto& g : gate) g = 1.0 / (1.0 + std::exp(-g));
  }
  std::vector<double> ctx(static_cast<size_t>(nh * D), 0.0);
  std::vector<double> score(static_cast<size_t>(pos - first + 1));
  const double scale = S.query_scale > 0 ? S.query_scale : 1.0 / std::sqrt(double(D));
  for (int h = 0; h < nh; ++h) {
    const int g = h / G;  // GQA: query head h reads kv head h / G
    double m = -INFINITY;
    for (int64_t p = first; p <= pos; ++p) {
      const double* kp = keys_[p].data() + g * D;
      double s = 0;
      for (int d = 0; d < D; ++d) s += q[h * D + d] * kp[d];
      s *= scale;
      if (S.attn_softcap > 0) s = std::tanh(s / S.attn_softcap) * S.attn_softcap;  // Gemma 2
      score[p - first] = s;
      m = std::max(m, score[p - first]);
    }
    double sum = 0;
    for (auto& s : score) sum += (s = std::exp(s - m));
    for (int64_t p = first; p <= pos; ++p) {
      const double wgt = score[p - first] / sum * gate[h];
      const double* vp = values_[p].data() + g * D;
      for (int d = 0; d < D; ++d) ctx[h * D + d] += wgt * vp[d];
    }
  }
  auto attn = linear(ctx, w_.at(Role::kOutProj));
  if (S.sandwich_norms) attn = family_norm(attn, w_.at(Role::kAttnPostNorm), L.rms_eps, S.norm);
  std::vector<double> h1(x.size());
  for (size_t i = 0; i < x.size(); ++i) h1[i] = x[i] + attn[i];

  // MLP block: from the post-attention norm of h1, or (parallel block) the same normed input.
  const auto hn = S.parallel_block ? xn : family_norm(h1, w_.at(Role::kPostNorm), L.rms_eps, S.norm);
  auto a = linear(hn, w_.at(Role::kMlpGate));
  const auto u = linear(hn, w_.at(Role::kMlpUp));
  for (size_t i = 0; i < a.size(); ++i) a[i] = activation(a[i], L.activation) * u[i];
  auto down = linear(a, w_.at(Role::kMlpDown));
  if (S.sandwich_norms) down = family_norm(down, w_.at(Role::kMlpPostNorm), L.rms_eps, S.norm);
  for (size_t i = 0; i < h1.size(); ++i) h1[i] += down[i];
  return h1;
}

Sequence run_reference(const LayerSpec& layer, const LayerWeights& weights, const Sequence& hidden_in) {
  ReferenceLayer ref(layer, weights);
  Sequence out;
  out.reserve(hidden_in.size());
  for (const auto& x : hidden_in) out.push_back(ref.step(x));
  return out;
}

Sequence run_reference_at(const LayerSpec& layer, const LayerWeights& weights, const Sequence& hidden_in,
                          const std::vector<int>& measured) {
  ReferenceLayer ref(layer, weights);
  Sequence out;
  out.reserve(measured.size());
  size_t next = 0;  // the next measured step
  const int last = measured.empty() ? 0 : measured.back() + 1;
  for (int t = 0; t < last; ++t) {
    if (t % 64 == 0) progress_tick();
    if (next < measured.size() && measured[next] == t) {
      out.push_back(ref.step(hidden_in[t]));
      ++next;
    } else {
      ref.append(hidden_in[t]);
    }
  }
  return out;
}

}  // namespace layoutx::model::numerics
