// The C++ side of the ONNX Runtime (CPU) harness: writes inputs, spawns `node
// scripts/ort/run.js`, reads outputs, timings and the ORT profile back.
// Node is found as $LAYOUTX_NODE or `node` in PATH; the harness directory is $LAYOUTX_ORT_DIR
// or the source tree's scripts/ort (onnxruntime-node installed there by scripts/setup).
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "emit/subprocess.h"
#include "emit/tensor_files.h"

namespace layoutx::emit {

std::string ort_harness_dir();
// Why ORT cannot run here (node absent, onnxruntime-node not installed), or nullopt when it
// can. Cached after the first call.
std::optional<std::string> ort_unavailable_reason();
// The onnxruntime-node version (throws Error when unavailable).
std::string ort_version();

struct MeasureOptions {
  int runs = 10;     // timed runs
  int warmup = 3;    // untimed runs first
  int threads = 1;   // ORT intra-op threads (1: a stable single-core figure on a shared machine)
  bool profile = true;
};

struct MeasureResult {
  TensorMap outputs;               // of the last run
  std::vector<double> warmup_ms;   // wall time per warm-up run (ms)
  std::vector<double> runs_ms;     // wall time per timed run (ms)
  double session_create_ms = 0.0;
  std::string ort_version;
  std::string out_dir;             // holds tensors.json + outputs, timings.json, ort_profile.json
  std::string profile_path;        // "" when profiling was off or ORT wrote none
  std::string timings_path;
};

// One-shot: writes `inputs` to WORK/inputs, runs run.js into WORK/ort, reads everything back.
// Throws Error with run.js's stderr when it fails.
MeasureResult ort_measure(const std::string& model_path, const TensorMap& inputs, const std::string& work_dir,
                          const MeasureOptions& opt);

// A long-lived session (run.js --serve): one node process and one ORT session for many runs,
// so a multi-step history costs one model load.
class OrtSession {
 public:
  OrtSession(const std::string& model_path, const std::string& work_dir, int threads = 1);
  ~OrtSession();
  TensorMap run(const TensorMap& inputs);

 private:
  std::string work_dir_, stderr_path_;
  std::unique_ptr<Subprocess> proc_;
  int calls_ = 0;
};

}  // namespace layoutx::emit
