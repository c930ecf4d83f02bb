#include "model/numerics/fidelity.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <list>
#include <numeric>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>

#include "model/builder.h"
#include "model/layer_fields.h"
#include "model/numerics/checkpoints.h"
#include "model/numerics/prepared_weights.h"
#include "model/numerics/reference.h"
#include "support/error.h"

namespace layoutx::model::numerics {

namespace {

double snr(double signal, double noise) {
  if (noise == 0) return std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(signal / noise);
}

std::set<size_t> top_k(const std::vector<double>& v, int k) {
  std::vector<size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  const size_t kk = std::min(idx.size(), static_cast<size_t>(k));
  std::partial_sort(idx.begin(), idx.begin() + kk, idx.end(), [&](size_t a, size_t b) { return v[a] > v[b]; });
  return {idx.begin(), idx.begin() + kk};
}

}  // namespace

Fidelity compare(const Sequence& ref, const Sequence& x, const Sequence& hidden_in, int k) {
  if (ref.size() != x.size() || ref.size() != hidden_in.size())
    throw Error("fidelity: step counts differ (" + std::to_string(ref.size()) + " vs " + std::to_string(x.size()) + ")");
  Fidelity f;
  f.steps = static_cast<int>(ref.size());
  f.k = k;
  f.min_step_snr_db = std::numeric_limits<double>::infinity();
  double sig = 0, noise = 0, dsig = 0;
  int topk = 0, top1 = 0;
  for (size_t t = 0; t < ref.size(); ++t) {
    if (ref[t].size() != x[t].size() || ref[t].size() != hidden_in[t].size())
      throw Error("fidelity: step " + std::to_string(t) + " output sizes differ");
    double s = 0, n = 0;
    for (size_t i = 0; i < ref[t].size(); ++i) {
      const double e = x[t][i] - ref[t][i];
      s += ref[t][i] * ref[t][i];
      n += e * e;
      dsig += (ref[t][i] - hidden_in[t][i]) * (ref[t][i] - hidden_in[t][i]);
      f.max_abs_err = std::max(f.max_abs_err, std::fabs(e));
    }
    sig += s;
    noise += n;
    f.step_snr_db.push_back(snr(s, n));
    f.min_step_snr_db = std::min(f.min_step_snr_db, f.step_snr_db.back());
    const auto a = top_k(ref[t], k), b = top_k(x[t], k);
    topk += a == b;
    top1 += top_k(ref[t], 1) == top_k(x[t], 1);
  }
  f.snr_db = snr(sig, noise);
  f.delta_snr_db = snr(dsig, noise);
  f.topk_agreement = f.steps ? double(topk) / f.steps : 0;
  f.top1_agreement = f.steps ? double(top1) / f.steps : 0;
  return f;
}

const char* to_string(Arithmetic a) {
  switch (a) {
    case Arithmetic::kFloat32: return "float32";
    case Arithmetic::kFloat64: return "float64";
  }
  return "?";
}

Arithmetic parse_arithmetic(const std::string& s) {
  if (s == "float32") return Arithmetic::kFloat32;
  if (s == "float64") return Arithmetic::kFloat64;
  throw Error("dtype: must be float32 or float64, got '" + s + "'");
}

namespace {

// The variant over hidden_in with the precision simulated as the toolchain quantizes it:
// calibrate the activation ranges on `exact` (weights prepared without simulation), then run on
// `simulated`.
// Outputs at the steps of `segments` (checkpoints.h) of hidden_in.
template <typename T>
Sequence run_quantized(const LayerGraph& g, PreparedWeights<T>& exact, PreparedWeights<T>& simulated,
                       const Sequence& hidden_in, const QuantOptions& quant, const std::vector<Segment>& segments) {
  SimOptions opt;
  opt.simulate_precision = true;
  opt.quantizer = quant.w4;
  ActivationRanges ranges;
  if (is_quantized(g.variant.precision()) && quant.calibration_steps > 0) {
    const int history = std::max(static_cast<int>(hidden_in.size()), quant.calibration_steps);
    ranges = calibrate_activations<T>(g, exact, calibration_inputs(g.layer.hidden, history, quant.calibration_seed),
                                      quant.calibration_steps, opt);
    opt.ranges = &ranges;
  }
  return simulate_segments<T>(g, simulated, hidden_in, segments, opt);
}

template <typename T>
Sequence run_variant_as(const LayerGraph& g, const LayerWeights& weights, const Sequence& hidden_in,
                        bool simulate_precision, const QuantOptions& quant) {
  if (!simulate_precision) return simulate<T>(g, weights, hidden_in, SimOptions{});
  PreparedWeights<T> exact(weights, false), simulated(weights, true);
  return run_quantized<T>(g, exact, simulated, hidden_in, quant, {Segment{0, static_cast<int>(hidden_in.size())}});
}

}  // namespace

Sequence run_variant(const LayerSpec& layer, const Variant& variant, const LayerWeights& weights,
                     const Sequence& hidden_in, Arithmetic arithmetic, bool simulate_precision,
                     const QuantOptions& quant) {
  const LayerGraph g = build_layer_graph(layer, variant);
  switch (arithmetic) {
    case Arithmetic::kFloat32: return run_variant_as<float>(g, weights, hidden_in, simulate_precision, quant);
    case Arithmetic::kFloat64: return run_variant_as<double>(g, weights, hidden_in, simulate_precision, quant);
  }
  return {};
}

namespace {

// What fidelity_snr_db reuses across calls, in memory: the explorer asks for many variants of
// one layer, and of layers that differ only in attention type or context, in a row.
// - WeightSet: the seeded weights of one set of weight shapes (they depend on nothing else of
//   the layer: sliding and full layers of a model, at every context, share them) and their
//   float32 preparation with the precision simulated (quantized once per dtype, not per variant).
// - ReferenceRun: the inputs and float64 reference outputs (at the checkpoints) of one
//   (layer, steps, seed).
struct WeightSet {
  explicit WeightSet(LayerWeights w) : weights(std::move(w)), prepared(weights, true), exact(weights, false) {}
  const LayerWeights weights;
  mutable PreparedWeights<float> prepared;  // refers to `weights`; thread-safe
  mutable PreparedWeights<float> exact;     // not simulated: the calibration pass
};

struct ReferenceRun {
  std::shared_ptr<const WeightSet> weights;
  std::vector<Segment> segments;  // checkpoint_segments(steps)
  Sequence in;                    // every step's input
  Sequence measured_in, ref;      // at the measured steps
};

std::string weights_key(const LayerSpec& L, uint64_t seed) {
  std::ostringstream os;
  for (const auto& [role, shape] : weight_shapes(L)) os << role_name(role) << model::to_string(shape) << ' ';
  os << seed;
  return os.str();
}

std::string run_key(const LayerSpec& L, int steps, uint64_t seed) {
  return model::layer_key(L) + std::to_string(steps) + ' ' + std::to_string(seed);
}

// The few most recently used values by key (a proxy layer's weight set is ~16 MB, plus ~8 MB
// per precision prepared, so only a few are kept).
template <typename V>
class Recent {
 public:
  explicit Recent(size_t capacity) : capacity_(capacity) {}
  template <typename Make>
  std::shared_ptr<const V> get(const std::string& key, Make make) {
    for (auto it = items_.begin(); it != items_.end(); ++it)
      if (it->first == key) {
        items_.splice(items_.begin(), items_, it);  // most recent first
        return items_.front().second;
      }
    items_.emplace_front(key, make());
    if (items_.size() > capacity_) items_.pop_back();
    return items_.front().second;
  }

 private:
  size_t capacity_;
  std::list<std::pair<std::string, std::shared_ptr<const V>>> items_;
};

std::shared_ptr<const ReferenceRun> reference_run(const LayerSpec& layer, int steps, uint64_t seed) {
  static std::mutex mu;  // callers may be concurrent; the values are immutable once made
  static Recent<WeightSet> weight_sets(2);
  static Recent<ReferenceRun> runs(8);
  std::lock_guard<std::mutex> lock(mu);
  return runs.get(run_key(layer, steps, seed), [&] {
    auto run = std::make_shared<ReferenceRun>();
    run->weights = weight_sets.get(weights_key(layer, seed),
                                   [&] { return std::make_shared<const WeightSet>(seeded_weights(layer, seed)); });
    run->segments = checkpoint_segments(steps);
    run->in = token_inputs(layer.hidden, steps, seed);
    const std::vector<int> measured = measured_steps(run->segments);
    for (int t : measured) run->measured_in.push_back(run->in[t]);
    run->ref = run_reference_at(layer, run->weights->weights, run->in, measured);
    return run;
  });
}

}  // namespace

Fidelity variant_fidelity(const LayerSpec& layer, const Variant& variant, int steps, uint64_t seed,
                          const QuantOptions& quant) {
  const auto r = reference_run(layer, steps, seed);
  const LayerGraph g = build_layer_graph(layer, variant);
  QuantOptions q = quant;
  q.calibration_seed = seed;
  return compare(r->ref, run_quantized<float>(g, r->weights->exact, r->weights->prepared, r->in, q, r->segments),
                 r->measured_in);
}

int fidelity_history(const LayerSpec& layer) {
  constexpr int kPastTheWindow = 8, kFullHistory = 512 + kPastTheWindow;
  if (layer.type == LayerType::kSliding) return layer.window + kPastTheWindow;
  return static_cast<int>(std::min<int64_t>(layer.context, kFullHistory));
}

double fidelity_snr_db(const LayerSpec& layer, const Variant& variant, int steps, uint64_t seed,
                       const QuantOptions& quant) {
  return variant_fidelity(layer, variant, steps, seed, quant).snr_db;
}

std::vector<StepTensors> step_io(const LayerSpec& layer, const Variant& variant, const LayerWeights& weights,
                                 int steps, uint64_t seed, bool simulate_precision) {
  const LayerGraph g = build_layer_graph(layer, variant);
  std::vector<StepTensors> io(static_cast<size_t>(steps));
  auto named = [](const RoleTensors<float>& ts) {
    std::map<std::string, Tensor<float>> m;
    for (const auto& [role, t] : ts) m.emplace(role_name(role), t);
    return m;
  };
  SimOptions opt;
  opt.simulate_precision = simulate_precision;
  simulate<float>(g, weights, token_inputs(layer.hidden, steps, seed), opt,
                  [&](int t, const RoleTensors<float>& in, const RoleTensors<float>& out) {
                    io[t].inputs = named(in);
                    io[t].outputs = named(out);
                  });
  return io;
}

std::map<std::string, Tensor<float>> weights_by_name(const LayerWeights& weights) {
  std::map<std::string, Tensor<float>> m;
  for (const auto& [role, t] : weights) m.emplace(role_name(role), t.cast<float>());
  return m;
}

}  // namespace layoutx::model::numerics
