#include "model/numerics/runtime.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

#include "model/numerics/buffer_pool.h"
#include "model/numerics/checkpoints.h"
#include "model/numerics/decode_runner.h"
#include "model/numerics/kv_cache.h"
#include "support/error.h"

namespace layoutx::model::numerics {

Sequence token_inputs(int hidden, int steps, uint64_t seed) {
  Sequence xs(static_cast<size_t>(steps));
  for (int t = 0; t < steps; ++t) {
    std::seed_seq seq{uint32_t(seed), uint32_t(seed >> 32), uint32_t(t), 0x7161u};
    std::mt19937_64 rng(seq);
    std::normal_distribution<double> n(0.0, 1.0);
    xs[t].resize(static_cast<size_t>(hidden));
    for (auto& x : xs[t]) x = n(rng);
  }
  return xs;
}

void rope_tables(const RopeSpec& rope, int64_t position, std::vector<double>& cos, std::vector<double>& sin) {
  const int r = rope.rotary_dims;
  cos.assign(static_cast<size_t>(r), 0.0);
  sin.assign(static_cast<size_t>(r), 0.0);
  for (int i = 0; i < r / 2; ++i) {
    const double angle = double(position) * rope_inv_freq(rope, i);
    cos[i] = cos[i + r / 2] = std::cos(angle);
    sin[i] = sin[i + r / 2] = std::sin(angle);
  }
}

double default_mask_value(Precision p) { return is_quantized(p) ? -100.0 : -1e4; }

template <typename T>
Sequence simulate(const LayerGraph& graph, const LayerWeights& weights, const Sequence& hidden_in,
                  const SimOptions& options, const StepObserver<T>& observe) {
  PreparedWeights<T> prepared(weights, options.simulate_precision);
  return simulate<T>(graph, prepared, hidden_in, options, observe);
}

template <typename T>
DecodeRunner<T>::DecodeRunner(const LayerGraph& graph, PreparedWeights<T>& weights, const SimOptions& options)
    : graph_(graph),
      options_(options),
      exec_(graph, weights,
            ExecOptions{.simulate_precision = options.simulate_precision,
                        .simulate_cache_codes = options.simulate_cache_codes,
                        .quantizer = options.quantizer,
                        .ranges = options.ranges,
                        .record = options.record}),
      kv_(graph.layer.kv_heads),
      head_dim_(graph.layer.head_dim),
      entries_(graph.layer.cache_entries),
      hidden_(graph.layer.hidden),
      window_(graph.variant.returns() == KvReturn::kWindow),
      k_layout_(graph.variant.k_layout()),
      masked_(options.mask_value.value_or(default_mask_value(graph.variant.precision()))) {
  // The caches hold zeros and values of the graph's own K/V outputs. When those outputs and the
  // cache inputs are f16 (the builder's graphs), the cached values are float16 values already:
  // the executor need not check or round them again (8 MB each at a full layer's ctx 4096).
  // The same holds for u8/u16 caches (kv_dtype): the outputs hold the cache's codes already.
  auto same = [&](Role in, Role out) {
    return graph.has(in) && graph.has(out) && graph.op(graph.find(in)).dtype == graph.op(graph.find(out)).dtype;
  };
  caches_in_dtype_ = same(Role::kKCache, Role::kKOut) && same(Role::kVCache, Role::kVOut);
  // The caches start empty (zeros, all slots masked), in recycled storage.
  for (const auto& [role, shape] : {std::pair{Role::kKCache, k_cache_shape(k_layout_, kv_, head_dim_, entries_)},
                                    std::pair{Role::kVCache, Shape{kv_, entries_, head_dim_}}}) {
    Tensor<T>& c = in_[role];
    c.shape = shape;
    c.data = BufferPool<T>::take(static_cast<size_t>(numel(shape)));
    std::fill(c.data.begin(), c.data.end(), T(0));
  }
}

template <typename T>
DecodeRunner<T>::~DecodeRunner() {
  for (Role r : {Role::kKCache, Role::kVCache}) BufferPool<T>::give(std::move(in_[r].data));
}

template <typename T>
void DecodeRunner<T>::run(int t, const std::vector<double>& x, const StepObserver<T>& observe) {
  const LayerSpec& L = graph_.layer;
  // 1. The token's hidden state.
  if (static_cast<int64_t>(x.size()) != hidden_)
    throw Error("simulation: step " + std::to_string(t) + " hidden state has " + std::to_string(x.size()) +
                " values, the layer's hidden size is " + std::to_string(hidden_));
  in_[Role::kHiddenIn] = Tensor<T>({1, hidden_}, std::vector<T>(x.begin(), x.end()));
  // 2. Rotary tables of the absolute position t.
  if (L.rope.rotary_dims > 0) {
    rope_tables(L.rope, t, cos_, sin_);
    const int64_t r = L.rope.rotary_dims;
    in_[Role::kRopeCos] = Tensor<T>({1, 1, r}, std::vector<T>(cos_.begin(), cos_.end()));
    in_[Role::kRopeSin] = Tensor<T>({1, 1, r}, std::vector<T>(sin_.begin(), sin_.end()));
  }
  // 3. The mask: written cache slots and the new token (last) are 0, unwritten slots masked.
  //    window: the min(t, N) entries written so far are the newest, at the end of the window;
  //    new_entry: slots 0 .. min(t, N)-1 were written (ring slot t mod N, or append slot t).
  Tensor<T> mask({1, 1, entries_ + 1}, T(0));
  for (int64_t j = 0; j < entries_; ++j)
    if (!kv_slot_open(graph_.variant.returns(), t, j, entries_, L.window)) mask[j] = static_cast<T>(masked_);
  in_[Role::kMask] = std::move(mask);
  // 4. Run the graph; its outputs stay in the executor (no copy unless observed).
  if (options_.record) exec_.set_recording(t >= options_.record_from_step);
  if (caches_in_dtype_) exec_.step(in_, {Role::kKCache, Role::kVCache});
  else exec_.step(in_);
  if (observe) observe(t, in_, exec_.outputs());
}

template <typename T>
void DecodeRunner<T>::keep_cache(int t) {
  if (window_) {
    // The returned window is the next cache: swap buffers (same shape) rather than copy.
    std::swap(in_[Role::kKCache], exec_.output(Role::kKOut));
    std::swap(in_[Role::kVCache], exec_.output(Role::kVOut));
    return;
  }
  const int64_t slot = kv_entry_slot(graph_.layer.type, t, entries_);
  if (slot >= 0)
    write_kv_entry(in_[Role::kKCache].data, in_[Role::kVCache].data, exec_.output(Role::kKOut).data,
                   exec_.output(Role::kVOut).data, kv_, head_dim_, entries_, slot, k_layout_);
}

template <typename T>
void DecodeRunner<T>::set_cache_before(int t, const std::vector<KvEntry<T>>& entries) {
  auto& k = in_[Role::kKCache].data;
  auto& v = in_[Role::kVCache].data;
  std::fill(k.begin(), k.end(), T(0));
  std::fill(v.begin(), v.end(), T(0));
  const int first = static_cast<int>(std::max<int64_t>(0, t - entries_));
  for (int s = first; s < t; ++s) {
    // The roll keeps the newest entries at the end of the window; new_entry its ring or
    // append slot (a full layer's tokens past its cache have none).
    const int64_t slot = window_ ? entries_ - (t - s) : kv_entry_slot(graph_.layer.type, s, entries_);
    if (slot >= 0) write_kv_entry(k, v, entries[s].k, entries[s].v, kv_, head_dim_, entries_, slot, k_layout_);
  }
}

template <typename T>
bool DecodeRunner<T>::rolled_entries_settled(int t, int since) {
  if (!window_) return true;
  const int first = static_cast<int>(std::max<int64_t>(0, t - entries_ + 1));  // still in the window after step t
  for (int s = first; s < since; ++s) {
    const int64_t before = entries_ - (t - s), after = before - 1;  // its slot in the cache, in the returned window
    const auto& kc = in_[Role::kKCache].data;
    const auto& vc = in_[Role::kVCache].data;
    const auto& ko = exec_.output(Role::kKOut).data;
    const auto& vo = exec_.output(Role::kVOut).data;
    for (int64_t h = 0; h < kv_; ++h)
      for (int64_t d = 0; d < head_dim_; ++d) {
        const size_t vb = static_cast<size_t>((h * entries_) * head_dim_ + d);
        if (kc[k_offset(k_layout_, h, d, before, head_dim_, entries_)] !=
                ko[k_offset(k_layout_, h, d, after, head_dim_, entries_)] ||
            vc[vb + before * head_dim_] != vo[vb + after * head_dim_])
          return false;
      }
  }
  return true;
}

template <typename T>
Sequence simulate(const LayerGraph& graph, PreparedWeights<T>& weights, const Sequence& hidden_in,
                  const SimOptions& options, const StepObserver<T>& observe) {
  const LayerSpec& L = graph.layer;
  const int steps = static_cast<int>(hidden_in.size());
  if (L.type != LayerType::kSliding && steps > L.cache_entries + 1)
    throw Error("simulation: a full layer at ctx " + std::to_string(L.context) + " holds " +
                std::to_string(L.cache_entries + 1) + " tokens; " + std::to_string(steps) +
                " steps exceed it (raise --ctx or lower --steps)");
  DecodeRunner<T> runner(graph, weights, options);
  Sequence out(static_cast<size_t>(steps));
  for (int t = 0; t < steps; ++t) {
    runner.run(t, hidden_in[t], observe);
    const Tensor<T>& y = runner.output();
    out[t].assign(y.data.begin(), y.data.end());
    runner.keep_cache(t);
  }
  return out;
}

Sequence calibration_inputs(int hidden, int steps, uint64_t seed) {
  // Another stream: the salt makes (seed, step) draw other tokens than token_inputs(seed).
  return token_inputs(hidden, steps, seed ^ 0xca11b4a7e5ull);
}

template <typename T>
ActivationRanges calibrate_activations(const LayerGraph& graph, PreparedWeights<T>& weights, const Sequence& history,
                                       int samples, SimOptions options) {
  ActivationRanges ranges;
  options.simulate_precision = false;
  options.ranges = nullptr;
  options.record = &ranges;
  // Only the recorded steps run in full; the ones before contribute their K/V entries.
  const int steps = static_cast<int>(history.size());
  simulate_segments<T>(graph, weights, history, {Segment{std::max(0, steps - samples), steps}}, options);
  return ranges;
}

template Sequence simulate<float>(const LayerGraph&, const LayerWeights&, const Sequence&, const SimOptions&,
                                  const StepObserver<float>&);
template Sequence simulate<double>(const LayerGraph&, const LayerWeights&, const Sequence&, const SimOptions&,
                                   const StepObserver<double>&);
template Sequence simulate<float>(const LayerGraph&, PreparedWeights<float>&, const Sequence&,
                                  const SimOptions&, const StepObserver<float>&);
template Sequence simulate<double>(const LayerGraph&, PreparedWeights<double>&, const Sequence&,
                                   const SimOptions&, const StepObserver<double>&);

template class DecodeRunner<float>;
template class DecodeRunner<double>;

template ActivationRanges calibrate_activations<float>(const LayerGraph&, PreparedWeights<float>&, const Sequence&, int,
                                                       SimOptions);
template ActivationRanges calibrate_activations<double>(const LayerGraph&, PreparedWeights<double>&, const Sequence&,
                                                        int, SimOptions);

}  // namespace layoutx::model::numerics
