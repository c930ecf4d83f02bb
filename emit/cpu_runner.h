// The CPU loop's runner (the loop itself is explorer/cpu_loop.h): one layer variant emitted with
// seeded weights and run in ONNX Runtime on this machine, and the device check that goes with it.
#pragma once
#include <string>

#include "costmodel/device_spec.h"
#include "emit/ort_runner.h"
#include "model/model_spec.h"
#include "model/variant.h"

namespace layoutx::emit {

// The timing boundary of an ONNX Runtime profile (db/ingest_ort_json.cc): the device that
// measure runs on must name it among its `boundaries`. Throws Error naming the device file.
inline constexpr const char* kOrtBoundary = "ort_node";
void check_ort_device(const costmodel::DeviceSpec& device);

// Emits `layer` as variant `v` (seeded weights, seed 1) to dir/model.onnx, runs it in ONNX
// Runtime (opt: warm-up, timed runs, threads, profiling) on the first step's inputs, then
// removes the ONNX file (hundreds of MB per Spark layer; the profile and timings stay).
// Throws Error on failure; an empty profile_path means ONNX Runtime wrote none.
MeasureResult run_seeded_in_ort(const model::LayerSpec& layer, const model::Variant& v, const std::string& dir,
                                const MeasureOptions& opt);

}  // namespace layoutx::emit
