// measure's single run (layoutx measure without --loop): one layer variant emitted with seeded
// weights, checked, written beside its run's files and timed in ONNX Runtime on this machine's
// CPU (warm-up, then timed runs, profiling on). The loop's runner, which removes its ONNX file
// after the run, is emit/cpu_runner.h.
#pragma once
#include <cstdint>
#include <string>

#include "emit/ort_runner.h"
#include "model/graph.h"
#include "model/model_spec.h"
#include "model/variant.h"

namespace layoutx::emit {

struct CpuMeasurement {
  std::string model_path;  // out/<bundle name>/<bundle name>.onnx, kept
  MeasureResult result;    // its files in out/<bundle name>/ too
};

// Emits `g` (the graph of `layer` as `v`) with `layer`'s weights seeded by `seed` to
// out/<bundle name>/<bundle name>.onnx (ONNX checker and shape inference first), then runs it
// with `opt` on the first decode step's inputs of the runtime simulation (the op work does not
// depend on the values: no data-dependent shapes or branches in these graphs). Throws Error on
// failure; an empty result.profile_path means ONNX Runtime wrote none.
CpuMeasurement measure_in_ort(const model::LayerSpec& layer, const model::Variant& v, const model::LayerGraph& g,
                              uint64_t seed, const std::string& out, const MeasureOptions& opt);

}  // namespace layoutx::emit
