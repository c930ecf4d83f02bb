// The device job bundle beside an emitted ONNX: everything it takes to compile and profile the
// variant on a Galaxy S25 and to bring the profile back into layoutx.
//   <name>.onnx         the layer graph (float32; see README "Emitted ONNX")
//   job.yaml            variant key, precision, layer type, ctx, device, I/O specs, the ingest line
//   calibration/        per-step graph inputs from the runtime simulation: sample_NNN/<input>.npy
//                       (AI Hub's client) and .bin raw float32 + tensors.json; input_list.txt (QNN);
//                       sample_NNN/expected/: the executor's outputs of that step (same formats)
//   submit_aihub.py     Qualcomm AI Hub: upload, quantize (w8a16/w4a16), compile to a QNN context
//                       binary, profile on the S25, download the profile JSON
//   qnn_sdk.sh          the same with the QNN SDK's command-line tools
// Neither script can run here (no AI Hub account, QNN SDK or device on these machines).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/graph.h"
#include "model/numerics/weights.h"

namespace layoutx::emit {

struct BundleOptions {
  std::string model_name;          // e.g. "spark-x2.5-1.7b" (job.yaml, ingest line)
  std::string weights_description; // e.g. "seeded: 1" or "safetensors: path, layer 3"
  uint64_t seed = 1;               // calibration history's token inputs
  int calibration_samples = 8;     // decode steps of the history saved as calibration inputs
  std::string device = "Samsung Galaxy S25";
  std::string aihub_device = "Samsung Galaxy S25 (Family)";  // qai_hub.Device name
  std::string db_device = "galaxy-s25";                      // `layoutx ingest --device`
};

struct BundleFiles {
  std::string dir;
  std::string onnx, job, aihub_script, qnn_script;
  std::vector<std::string> calibration;  // sample directories
};

// The emitted file name stem: "<layer>_<preset or 'custom'>_<precision>", e.g. "sliding_ring_w4a16".
std::string bundle_name(const model::LayerGraph& g);

// Writes the ONNX (checked with the ONNX checker and shape inference first) and the bundle into
// `dir` (created). Throws Error naming the file that could not be written.
BundleFiles write_bundle(const model::LayerGraph& g, const model::numerics::LayerWeights& weights,
                         const std::string& dir, const BundleOptions& opt);

// The `layoutx ingest` command line for a profile that came back for this bundle.
std::string ingest_command(const model::LayerGraph& g, const BundleOptions& opt, const std::string& profile_file);

}  // namespace layoutx::emit
