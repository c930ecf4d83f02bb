// The device job bundle beside an emitted ONNX: everything it takes to compile and profile the
// variant on an HTP device (its spec's identity: configs/devices/<name>.yaml) and to bring the
// profile back into layoutx.
//   <name>.onnx         the layer graph (float32; see README "Emitted ONNX")
//   job.yaml            variant key, precision, layer type, ctx, device, I/O specs, the ingest line
//   calibration/        per-step graph inputs from the runtime simulation: sample_NNN/<input>.bin,
//                       raw float32, + tensors.json (names, shapes; AI Hub's client reads them with
//                       numpy.fromfile); input_list.txt (QNN); sample_NNN/expected/: the executor's
//                       outputs of that step (same format). Each tensor is stored once.
//   submit_aihub.py     Qualcomm AI Hub: upload, quantize (w8a16/w4a16), compile to a QNN context
//                       binary, profile on the device, download the profile JSON
//   qnn_sdk.sh          the same with the QNN SDK's command-line tools
// Neither script can run here (no AI Hub account, QNN SDK or device on these machines).
#pragma once
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "costmodel/device_spec.h"
#include "emit/io_signature.h"
#include "emit/tensor_files.h"
#include "model/graph.h"
#include "model/numerics/weights.h"

namespace YAML {
class Emitter;
}

namespace layoutx::emit {

struct BundleOptions {
  std::string model_name;          // e.g. "spark-x2.5-1.7b" (job.yaml, ingest line)
  std::string weights_description; // e.g. "seeded: 1" or "safetensors: path, layer 3"
  uint64_t seed = 1;               // calibration history's token inputs
  int calibration_samples = 8;     // decode steps of the history saved as calibration inputs
  // The target, from the device spec (device_bundle_options): every field is required.
  std::string device;        // e.g. "Samsung Galaxy S25" (job.yaml, the scripts' comments)
  std::string aihub_device;  // qai_hub.Device name, e.g. "Samsung Galaxy S25 (Family)"
  std::string db_device;     // `layoutx ingest --device`: the spec's name, e.g. "galaxy-s25"
  std::string soc;           // e.g. "Snapdragon 8 Elite (SM8750)"
  std::string htp_arch;      // e.g. "v79": the QNN context binary's dsp_arch and HTP libraries
  double vtcm_mb = 0;        // the QNN graph config's vtcm_mb
};

// The target fields of a device spec; throws Error when the device is no HTP device on AI Hub
// (identity.htp_arch, identity.aihub_device and vtcm_mb are what a bundle needs).
BundleOptions device_bundle_options(const costmodel::DeviceSpec& device);

struct BundleFiles {
  std::string dir;
  std::string onnx, job, aihub_script, qnn_script;
  std::vector<std::string> calibration;  // sample directories
};

// What a bundle takes on disk, known before anything is written.
struct BundleSize {
  int64_t per_sample = 0;  // one calibration sample: the step's inputs and expected outputs, raw float32
  int64_t onnx = 0;        // the ONNX's float32 weights (norms, biases and protobuf framing, a few KB, not counted)
  int samples = 0;
  int64_t total() const { return onnx + per_sample * samples; }
};
BundleSize bundle_size(const model::LayerGraph& g, int samples);

// The most one `emit` (or `next --out`) writes: 2 GiB. A full layer's calibration samples grow
// with the context (Spark at 65536 tokens: 0.54 GB a sample, K and V caches).
inline constexpr int64_t kMaxBundleBytes = int64_t{2} << 30;

// Throws Error when the bundles together take more than kMaxBundleBytes, naming their size, the
// cap and how many calibration samples (`samples_flag`, "" when the verb has no such flag) would fit.
void check_bundle_sizes(const std::vector<BundleSize>& sizes, const std::string& samples_flag);

// The emitted file name stem: "<layer>_<preset or 'custom'>_<precision>", e.g. "sliding_ring_w4a16".
std::string bundle_name(const model::LayerGraph& g);

// Writes the ONNX (checked with the ONNX checker and shape inference first) and the bundle into
// `dir` (created). Throws Error naming the file that could not be written.
BundleFiles write_bundle(const model::LayerGraph& g, const model::numerics::LayerWeights& weights,
                         const std::string& dir, const BundleOptions& opt);

// What a bundle holds, whatever graph it is of: one layer (write_bundle) or a part's layers
// (emit/part.h write_part_bundle). write_bundle_content writes it into `dir` (created).
struct BundleContent {
  std::string name;                     // the file stem: <name>.onnx
  std::string what;                     // job.yaml's first line: "one layer variant, one decode step"
  const onnx::ModelProto* onnx = nullptr;  // checked (checker, shape inference) by its maker
  IoSignature sig;
  std::vector<std::pair<TensorMap, TensorMap>> samples;  // calibration: each step's inputs and expected outputs
  model::Precision precision = model::Precision::kFp16;
  std::string key;                      // the scripts' VARIANT_KEY: what was emitted
  std::function<void(YAML::Emitter&)> identity;  // job.yaml's keys between `schema` and `precision`
  std::string ingest_aihub, ingest_qnn; // what to run when a profile comes back (job.yaml, the scripts)
};
BundleFiles write_bundle_content(const BundleContent& c, const std::string& dir, const BundleOptions& opt);

// The `layoutx ingest` command line for a profile that came back for this bundle.
std::string ingest_command(const model::LayerGraph& g, const BundleOptions& opt, const std::string& profile_file);

}  // namespace layoutx::emit
