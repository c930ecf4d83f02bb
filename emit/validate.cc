#include "emit/validate.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>

#include "emit/history.h"
#include "emit/onnx_writer.h"
#include "emit/ort_runner.h"
#include "model/numerics/runtime.h"
#include "support/atomic_file.h"
#include "support/error.h"

namespace layoutx::emit {

namespace num = model::numerics;

Validation validate_in_ort(const model::LayerGraph& g, const num::LayerWeights& weights, int steps, uint64_t seed,
                           const std::string& work_dir, bool qdq_cache) {
  const auto& L = g.layer;
  const num::Sequence hidden = num::token_inputs(L.hidden, steps, seed);

  // 0. With qdq_cache: the u8 cache encodings, calibrated over the history (float pass).
  num::ActivationRanges ranges;
  std::map<std::string, std::pair<double, double>> cache_ranges;
  num::SimOptions sim;
  if (qdq_cache) {
    num::PreparedWeights<float> prepared(weights, false);
    ranges = num::calibrate_activations<float>(g, prepared, hidden, steps);
    for (model::Vertex v = 0; v < g.size(); ++v) {
      const auto& n = g.op(v);
      auto it = ranges.find(n.name);
      if (n.kind == model::OpKind::kConvert && n.dtype == model::DType::kU8 && it != ranges.end())
        cache_ranges[n.name] = {it->second.lo, it->second.hi};
    }
    sim.simulate_cache_codes = true;
    sim.ranges = &ranges;
  }

  // 1. The executor (float32) over the history, keeping each step's K/V outputs.
  std::vector<std::vector<double>> ref_kv(static_cast<size_t>(steps));
  num::StepObserver<float> observe = [&](int t, const num::RoleTensors<float>&, const num::RoleTensors<float>& out) {
    for (auto role : {model::Role::kKOut, model::Role::kVOut})
      for (float x : out.at(role).data) ref_kv[static_cast<size_t>(t)].push_back(x);
  };
  const num::Sequence ref = num::simulate<float>(g, weights, hidden, sim, observe);

  // 2. The same graph as ONNX, run step by step in ORT; we play the runtime for the cache.
  ensure_directory(work_dir);
  const std::string model_path = (std::filesystem::path(work_dir) / "model.onnx").string();
  auto m = to_onnx(g, LayerWeightsSource(weights), {.cache_ranges = qdq_cache ? &cache_ranges : nullptr});
  check_onnx(m, g);
  write_onnx(m, model_path);
  OrtSession ort(model_path, (std::filesystem::path(work_dir) / "steps").string());
  LayerRuntime runtime(g, static_cast<float>(num::default_mask_value(g.variant.precision())));
  num::Sequence got(static_cast<size_t>(steps));
  double kv_sig = 0, kv_noise = 0, kv_max = 0;
  for (int t = 0; t < steps; ++t) {
    Tensor h{{1, L.hidden}, std::vector<float>(hidden[static_cast<size_t>(t)].begin(), hidden[static_cast<size_t>(t)].end())};
    TensorMap out = ort.run(runtime.inputs(h));
    const Tensor& y = out.at("hidden_out");
    got[static_cast<size_t>(t)].assign(y.data.begin(), y.data.end());
    size_t i = 0;
    for (const char* name : {"k_out", "v_out"})
      for (float x : out.at(name).data) {
        const double r = ref_kv[static_cast<size_t>(t)].at(i++), d = x - r;
        kv_sig += r * r;
        kv_noise += d * d;
        kv_max = std::max(kv_max, std::abs(d));
      }
    runtime.absorb(out);
  }

  // 3. Fidelity of ORT against the executor.
  Validation v;
  v.steps = steps;
  v.hidden = num::compare(ref, got, hidden);
  v.kv_snr_db = kv_noise == 0 ? std::numeric_limits<double>::infinity() : 10.0 * std::log10(kv_sig / kv_noise);
  v.kv_max_abs_err = kv_max;
  return v;
}

}  // namespace layoutx::emit
