#include "emit/cpu_measure.h"

#include <filesystem>

#include "emit/bundle.h"
#include "emit/onnx_writer.h"
#include "emit/weights.h"
#include "model/numerics/fidelity.h"
#include "model/numerics/weights.h"
#include "support/atomic_file.h"

namespace layoutx::emit {

namespace fs = std::filesystem;

CpuMeasurement measure_in_ort(const model::LayerSpec& layer, const model::Variant& v, const model::LayerGraph& g,
                              uint64_t seed, const std::string& out, const MeasureOptions& opt) {
  // 1. The ONNX with seeded weights, checked, written.
  auto w = model::numerics::seeded_weights(layer, seed);
  const std::string name = bundle_name(g);
  const fs::path dir = fs::path(out) / name;
  ensure_directory(dir);
  auto m = to_onnx(g, LayerWeightsSource(w));
  check_onnx(m, g);
  CpuMeasurement r;
  r.model_path = (dir / (name + ".onnx")).string();
  write_onnx(m, r.model_path);
  // 2. Inputs: the first decode step of the runtime simulation.
  auto io = model::numerics::step_io(layer, v, w, 1, seed);
  TensorMap inputs;
  for (const auto& [n, t] : io.at(0).inputs) inputs[n] = Tensor{t.shape, t.data};
  // 3. Run: warm-up, then timed runs with profiling on.
  r.result = ort_measure(r.model_path, inputs, dir.string(), opt);
  return r;
}

}  // namespace layoutx::emit
