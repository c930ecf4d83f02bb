// The I/O signature of an emitted layer graph: what the exporter and the runtime must match.
// Names are model::role_name; the emitted ONNX is float32 at the boundary (README: "Emitted
// ONNX"), so every tensor here is float32.
#pragma once
#include <string>
#include <vector>

#include "model/graph.h"

namespace layoutx::emit {

struct TensorSpec {
  std::string name;     // role_name: "hidden_in", "k_cache", ...
  model::Shape shape;   // fixed (no symbolic dims: one graph per layer type and context)
  std::string dtype;    // "float32"
  model::Role role = model::Role::kNone;
  std::string meaning;  // what the tensor holds / what the runtime must do with it
};

struct IoSignature {
  std::vector<TensorSpec> inputs;   // in graph input order
  std::vector<TensorSpec> outputs;  // in graph output order
};

// The Input and Output vertices of `g`, in vertex order, with their meaning for this variant
// (e.g. k_out of a ring layer: "write into ring slot t mod N").
IoSignature io_signature(const model::LayerGraph& g);

}  // namespace layoutx::emit
