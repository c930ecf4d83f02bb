// safetensors files (the Hugging Face checkpoint format): an 8-byte little-endian header
// length, a JSON header {name: {dtype, shape, data_offsets: [begin, end)}, "__metadata__": {...}}
// (parsed with yaml-cpp), then the data section. Reads F32, F16 and BF16 tensors into float64.
// And the config-driven mapping from a checkpoint layer's tensor names to weight roles.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "model/model_spec.h"
#include "model/numerics/weights.h"

namespace layoutx::model::numerics {

struct SafetensorsEntry {
  std::string dtype;  // "F32", "F16", "BF16", ...
  Shape shape;
  uint64_t begin = 0, end = 0;  // byte range within the data section
};

class SafetensorsFile {
 public:
  // Reads and validates the header: every entry's byte range must lie within the file and
  // match its shape and dtype. Throws Error naming the file, the tensor and what is wrong.
  explicit SafetensorsFile(std::string path);

  const std::string& path() const { return path_; }
  bool has(const std::string& name) const { return entries_.count(name) > 0; }
  const std::map<std::string, SafetensorsEntry>& entries() const { return entries_; }
  // The tensor as float64; throws Error if it is absent or of an unsupported dtype.
  Tensor<double> read(const std::string& name) const;

 private:
  std::string path_;
  std::map<std::string, SafetensorsEntry> entries_;
  uint64_t data_start_ = 0;
};

// Writes tensors as a safetensors file in `dtype` (F32, F16 or BF16; values rounded to it).
// For tests and tools; throws Error if the file cannot be written.
void write_safetensors(const std::string& path, const std::map<std::string, Tensor<double>>& tensors,
                       const std::string& dtype = "F32");

// Which checkpoint tensor holds each weight role (configs/models/<model>.weights.yaml).
struct WeightMap {
  std::string source;                 // file it was read from
  std::map<Role, std::string> names;  // role -> tensor name with "{i}" standing for the layer index
  bool linear_out_in = true;          // projections stored [out, in] (HF nn.Linear): transposed on load
  double norm_offset = 0.0;           // added to norm weights on load (1.0 for checkpoints storing w - 1)
};
// Schema: linear_layout: out_in | in_out (default out_in); norm_offset: number (default 0);
// tensors: {<role name>: <tensor name with {i}>}. Unknown keys and roles are errors.
WeightMap load_weight_map(const std::string& path);
WeightMap load_weight_map_text(const std::string& text, const std::string& name);

// The weights of layer `layer_index` in the graph's layouts. Throws Error listing every role
// whose tensor is missing or has the wrong shape.
LayerWeights load_layer_weights(const SafetensorsFile& file, const WeightMap& map, const LayerSpec& layer,
                                int layer_index);

}  // namespace layoutx::model::numerics
