#include "emit/cpu_runner.h"

#include <algorithm>
#include <filesystem>

#include "emit/onnx_writer.h"
#include "emit/weights.h"
#include "model/builder.h"
#include "model/numerics/fidelity.h"
#include "model/numerics/weights.h"
#include "support/atomic_file.h"
#include "support/error.h"

namespace layoutx::emit {

namespace fs = std::filesystem;

void check_ort_device(const costmodel::DeviceSpec& device) {
  if (std::find(device.boundaries.begin(), device.boundaries.end(), kOrtBoundary) != device.boundaries.end()) return;
  std::string list;
  for (const auto& b : device.boundaries) list += (list.empty() ? "" : ", ") + b;
  throw Error("--device: " + device.source + ": boundaries: " + device.name + " times layers as [" + list +
              "], not as " + kOrtBoundary + " (ONNX Runtime's profile on this machine's CPU; e.g. --device onnxruntime-cpu)");
}

MeasureResult run_seeded_in_ort(const model::LayerSpec& layer, const model::Variant& v, const std::string& dir,
                                const MeasureOptions& opt) {
  auto g = model::build_layer_graph(layer, v);
  auto w = model::numerics::seeded_weights(layer, 1);
  ensure_directory(dir);
  const std::string path = (fs::path(dir) / "model.onnx").string();
  write_onnx(to_onnx(g, LayerWeightsSource(w)), path);
  auto io = model::numerics::step_io(layer, v, w, 1, 1);
  TensorMap inputs;
  for (const auto& [n, t] : io.at(0).inputs) inputs[n] = Tensor{t.shape, t.data};
  auto res = ort_measure(path, inputs, dir, opt);
  std::error_code ec;
  fs::remove(path, ec);
  return res;
}

}  // namespace layoutx::emit
