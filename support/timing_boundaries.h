// The timing boundaries a profile's layer figure may measure, one list for the database (the
// CHECK constraint of measurement_runs.boundary, db/schema.h) and the device specs (`boundaries`:
// which of them is the layer's time on the device, costmodel/device_spec.h):
//   netrun                 qnn-net-run's wall time of the graph (NETRUN)
//   accelerator            QNN "Accelerator (execute) time"
//   accelerator_excl_wait  QNN "Accelerator (execute excluding wait) time"
//   aihub_estimate         AI Hub's estimated_inference_time
//   ort_node               ONNX Runtime: the sum of the node kernel times of a run
//   ours                   our own YAML/CSV measurement files
#pragma once
#include <string>

namespace layoutx {

inline constexpr const char* kTimingBoundaries[] = {"netrun", "accelerator", "accelerator_excl_wait", "aihub_estimate",
                                                    "ort_node", "ours", nullptr};

inline bool is_timing_boundary(const std::string& s) {
  for (const char* const* b = kTimingBoundaries; *b; ++b)
    if (s == *b) return true;
  return false;
}

}  // namespace layoutx
