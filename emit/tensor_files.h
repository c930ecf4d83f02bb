// Tensors on disk as the ORT harness (scripts/ort/run.js) reads and writes them: raw
// little-endian float32 files beside an index DIR/tensors.json =
// {"tensors": [{"name", "file", "shape", "dtype": "float32"}]}. The job bundle's calibration
// inputs use the same layout (AI Hub's Python client reads them with numpy.fromfile).
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

}  // namespace layoutx::emit
