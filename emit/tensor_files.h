// Tensors on disk as the ORT harness (scripts/ort/run.js) reads and writes them: raw
// little-endian float32 files beside an index DIR/tensors.json =
// {"tensors": [{"name", "file", "shape", "dtype": "float32"}]}. The job bundle's calibration
// inputs use the same layout, plus a .npy copy of each tensor for AI Hub's Python client.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "model/graph.h"

namespace layoutx::emit {

struct Tensor {
  model::Shape shape;
  std::vector<float> data;  // row-major, numel(shape) elements
};
using TensorMap = std::map<std::string, Tensor>;  // by tensor name (role_name)

// Writes DIR/<name>.bin and DIR/tensors.json (creates DIR). Throws Error naming the path.
void write_tensors(const std::string& dir, const TensorMap& tensors);
// Reads DIR/tensors.json and the files it names. Throws Error naming the file and problem
// (missing file, size that does not match the shape, dtype other than float32).
TensorMap read_tensors(const std::string& dir);
// Writes one tensor as a NumPy .npy file (format 1.0, '<f4', C order).
void write_npy(const std::string& path, const Tensor& t);

}  // namespace layoutx::emit
