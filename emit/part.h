// A part: consecutive decoder layers compiled into one context binary (issue 35, the whole-model
// layout's `parts`), emitted as one ONNX graph. The hidden state passes inside the graph from
// each layer to the next; every layer keeps its own K/V cache inputs and outputs; the layers of
// one type share the step's mask and rotary tables, as the exporters' parts do.
//
// Tensor names in the part (one rule, part_tensor_name): its boundary tensors are names a file,
// a QNN input list and a C identifier take ("/" is not one), its inside ones are prefixed paths:
//   hidden_in, hidden_out            the part's boundary (first layer's input, last's output)
//   layer<i>_hidden_out              the hidden state between layer i and the next (inside)
//   <type>_mask, <type>_rope_cos, <type>_rope_sin   shared by the part's layers of that type
//   layer<i>_k_cache, layer<i>_v_cache, layer<i>_k_out, layer<i>_v_out   layer i's caches
//   layer<i>/<name>                  layer i's weights and ops ("layer3/attn/scores")
// Node names are prefixed the same way. The embedding gather and the LM head are not part
// graphs here (they are no layer graphs in layoutx): a part emits decoder layers only.
#pragma once
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "emit/bundle.h"
#include "emit/io_signature.h"
#include "emit/tensor_files.h"
#include "emit/validate.h"
#include "model/graph.h"
#include "model/model_spec.h"
#include "model/numerics/weights.h"

namespace layoutx::emit {

struct PartLayer {
  int index = 0;  // the decoder layer's index in the model
  std::unique_ptr<const model::LayerGraph> graph;
  model::numerics::LayerWeights weights;
};

struct Part {
  std::string name;               // e.g. "part_00"
  std::vector<PartLayer> layers;  // ascending, consecutive decoder layers
};

// The part of `m` made of decoder layers `layers` (consecutive, ascending) at context `ctx`, each
// built at its type's variant; weights(index, layer) gives each layer's weights (nullptr: none,
// for sizing). Named part_name(layers). Throws Error naming a type without a variant.
Part model_part(const model::ModelSpec& m, int ctx, const std::vector<int>& layers,
                const std::map<model::LayerType, model::Variant>& variants,
                const std::function<model::numerics::LayerWeights(int, const model::LayerSpec&)>& weights);

// A part's name by its layers: "layers_<first>_<last>".
std::string part_name(const std::vector<int>& layers);

// Checks that `p` can be one graph: at least one layer, one hidden width, and the layers of one
// type built alike (they share the mask and rotary tables). Throws Error naming the layer.
void check_part(const Part& p);

// The part's name of layer `member`'s tensor `name` (a role name for the layer graph's I/O, an
// op or initializer name otherwise); "" stays "" (an absent optional ONNX input).
std::string part_tensor_name(const Part& p, size_t member, const std::string& name);

// The part as one ONNX model: each layer's to_onnx, renamed and joined. Runs the checker and
// shape inference and checks every layer's tensor shapes under their part names.
onnx::ModelProto part_to_onnx(const Part& p);

// Inputs and outputs of the part (deduplicated shared inputs; hidden_in and hidden_out once).
IoSignature part_io_signature(const Part& p);

// The first `steps` decode steps of a seeded history through the part (the executor, float32,
// each layer fed the previous one's outputs): each step's inputs and expected outputs, by the
// part's tensor names. The calibration samples of a part's bundle.
std::vector<std::pair<TensorMap, TensorMap>> part_step_io(const Part& p, int steps, uint64_t seed);

// The part emitted, run in ONNX Runtime over `steps` tokens (the harness plays the runtime for
// every layer's cache) and compared with the executor run layer by layer on the same history:
// hidden = the part's hidden_out; K/V over every layer's k_out and v_out.
Validation validate_part_in_ort(const Part& p, int steps, uint64_t seed, const std::string& work_dir);

// What the part's bundle takes on disk: its layers' weights and each sample's boundary tensors.
BundleSize part_bundle_size(const Part& p, int samples);

// The part's device job bundle in `dir`: <part name>.onnx, job.yaml (the part's layers and their
// variants), calibration/ from part_step_io, submit_aihub.py and qnn_sdk.sh. A part's profile is
// one graph's: `layoutx ingest` takes one layer's, so job.yaml's ingest lines say so and point at
// the prediction to compare it with (`ingest_hint`).
BundleFiles write_part_bundle(const Part& p, const std::string& dir, const BundleOptions& opt,
                              const std::string& ingest_hint);

}  // namespace layoutx::emit
