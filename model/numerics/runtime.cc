#include "model/numerics/runtime.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

#include "model/numerics/buffer_pool.h"
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
Sequence simulate(const LayerGraph& graph, PreparedWeights<T>& weights, const Sequence& hidden_in,
                  const SimOptions& options, const StepObserver<T>& observe) {
  const LayerSpec& L = graph.layer;
  const int steps = static_cast<int>(hidden_in.size());
  const int64_t kv = L.kv_heads, D = L.head_dim, N = L.cache_entries, H = L.hidden;
  const bool window = graph.variant.returns() == KvReturn::kWindow;
  const bool sliding = L.type == LayerType::kSliding;
  if (!sliding && steps > N + 1)
    throw Error("simulation: a full layer at ctx " + std::to_string(L.context) + " holds " + std::to_string(N + 1) +
                " tokens; " + std::to_string(steps) + " steps exceed it (raise --ctx or lower --steps)");
  const double masked = options.mask_value.value_or(default_mask_value(graph.variant.precision()));

  Executor<T> exec(graph, weights,
                   ExecOptions{.simulate_precision = options.simulate_precision,
                               .quantizer = options.quantizer,
                               .ranges = options.ranges,
                               .record = options.record});
  // The caches hold zeros and values of the graph's own K/V outputs. When those outputs and the
  // cache inputs are f16 (the builder's graphs), the cached values are float16 values already:
  // the executor need not check or round them again (8 MB each at a full layer's ctx 4096).
  auto f16 = [&](Role r) { return graph.has(r) && graph.op(graph.find(r)).dtype == DType::kF16; };
  const bool caches_in_dtype = f16(Role::kKCache) && f16(Role::kVCache) && f16(Role::kKOut) && f16(Role::kVOut);
  RoleTensors<T> in;
  // The caches start empty (zeros, all slots masked), in recycled storage.
  for (const auto& [role, shape] :
       {std::pair{Role::kKCache, Shape{kv, D, N}}, std::pair{Role::kVCache, Shape{kv, N, D}}}) {
    Tensor<T>& c = in[role];
    c.shape = shape;
    c.data = BufferPool<T>::take(static_cast<size_t>(numel(shape)));
    std::fill(c.data.begin(), c.data.end(), T(0));
  }
  std::vector<double> cos, sin;
  Sequence out(static_cast<size_t>(steps));
  for (int t = 0; t < steps; ++t) {
    // 1. The token's hidden state.
    if (static_cast<int64_t>(hidden_in[t].size()) != H)
      throw Error("simulation: step " + std::to_string(t) + " hidden state has " + std::to_string(hidden_in[t].size()) +
                  " values, the layer's hidden size is " + std::to_string(H));
    in[Role::kHiddenIn] = Tensor<T>({1, H}, std::vector<T>(hidden_in[t].begin(), hidden_in[t].end()));
    // 2. Rotary tables of the absolute position t.
    if (L.rope.rotary_dims > 0) {
      rope_tables(L.rope, t, cos, sin);
      const int64_t r = L.rope.rotary_dims;
      in[Role::kRopeCos] = Tensor<T>({1, 1, r}, std::vector<T>(cos.begin(), cos.end()));
      in[Role::kRopeSin] = Tensor<T>({1, 1, r}, std::vector<T>(sin.begin(), sin.end()));
    }
    // 3. The mask: written cache slots and the new token (last) are 0, unwritten slots masked.
    //    window: the min(t, N) entries written so far are the newest, at the end of the window;
    //    new_entry: slots 0 .. min(t, N)-1 were written (ring slot t mod N, or append slot t).
    Tensor<T> mask({1, 1, N + 1}, T(0));
    for (int64_t j = 0; j < N; ++j)
      if (!kv_slot_written(graph.variant.returns(), t, j, N)) mask[j] = static_cast<T>(masked);
    in[Role::kMask] = std::move(mask);
    // 4. Run the graph; its outputs stay in the executor (no copy unless observed).
    if (options.record) exec.set_recording(t >= options.record_from_step);
    if (caches_in_dtype) exec.step(in, {Role::kKCache, Role::kVCache});
    else exec.step(in);
    if (observe) observe(t, in, exec.outputs());
    const Tensor<T>& y = exec.output(Role::kHiddenOut);
    out[t].assign(y.data.begin(), y.data.end());
    // 5. Keep the cache.
    if (window) {
      // The returned window is the next cache: swap buffers (same shape) rather than copy.
      std::swap(in[Role::kKCache], exec.output(Role::kKOut));
      std::swap(in[Role::kVCache], exec.output(Role::kVOut));
    } else {
      const int64_t slot = kv_entry_slot(L.type, t, N);
      if (slot >= 0)
        write_kv_entry(in[Role::kKCache].data, in[Role::kVCache].data, exec.output(Role::kKOut).data,
                       exec.output(Role::kVOut).data, kv, D, N, slot);
    }
  }
  for (Role r : {Role::kKCache, Role::kVCache}) BufferPool<T>::give(std::move(in[r].data));
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
  options.record_from_step = std::max(0, static_cast<int>(history.size()) - samples);
  simulate<T>(graph, weights, history, options);
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

template ActivationRanges calibrate_activations<float>(const LayerGraph&, PreparedWeights<float>&, const Sequence&, int,
                                                       SimOptions);
template ActivationRanges calibrate_activations<double>(const LayerGraph&, PreparedWeights<double>&, const Sequence&,
                                                        int, SimOptions);

}  // namespace layoutx::model::numerics
