// The whole model as the unit of decision (issue 35): each layer type's layout, how the layers are
// grouped into context binaries ("parts"), where the embedding gather and the LM head run and at
// which precision, what the host does to the KV cache each token, and what a step's time
// includes. Priced from the layer graphs' predictions (the calibrated cost model), the device's
// per-execute cost (the calibration's graph-level term of a graph that has nothing else) and the
// device file's runtime terms (costmodel/runtime_spec.h).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "costmodel/runtime_spec.h"
#include "explorer/composition.h"
#include "explorer/evaluator.h"
#include "explorer/layout_file.h"
#include "explorer/model_layout_axes.h"
#include "model/model_spec.h"

namespace layoutx::explorer {

struct ModelLayout : ModelAxes {
  Assignment layers;  // each layer type's variant (all at one precision)
};

struct PartCost {
  std::string name;          // "embed", "layers 0-13", "layers 14-27 + head", ...
  std::vector<int> layers;   // decoder layer indices, ascending
  bool embed = false, head = false;
  int graphs_merged = 0;     // one-layer graphs (and embed / head graphs) it is made of
  double ms = 0, low_ms = 0, high_ms = 0;  // one execute of the part on the device
  double floor_ms = 0;       // its bytes at DRAM peak
  double weight_bytes = 0;   // its weights (the embedding table when the gather runs in it)
  double io_bytes = 0;       // its boundary tensors per token (the caches, the hidden state)
  bool pays_wakeup = false;  // longer than the RPC polling window
};

struct ModelStep {
  int ctx = 0;
  std::vector<PartCost> parts;
  double execute_ms = 0;     // the device's cost of one graph execute (saved once per merged graph)
  double graphs_ms = 0, graphs_low_ms = 0, graphs_high_ms = 0;  // the parts, summed
  // Host terms (runner scope only; 0 for graphs): per call, KV update, sampling, wake-ups.
  double host_calls_ms = 0, kv_update_ms = 0, sampling_ms = 0, wakeup_ms = 0;
  double host_ms = 0, host_low_ms = 0, host_high_ms = 0;
  double ms = 0, low_ms = 0, high_ms = 0;  // per token; bounds summed (errors fully correlated)
  double tokens_per_s = 0, tokens_low = 0, tokens_high = 0;  // 1000 / ms, 1000 / high_ms, 1000 / low_ms (inf at 0)
  double floor_ms = 0;       // every part's floor
  double efficiency = 0;     // floor_ms / ms
  std::vector<std::string> notes;  // what the figure leaves out (e.g. no runtime terms)
};

// One graph a part is made of, priced: its prediction and sizes.
struct MemberCost {
  double ms = 0, low_ms = 0, high_ms = 0, floor_ms = 0;
  double weight_bytes = 0, io_bytes = 0;
  std::vector<double> design_row;  // the prediction's (costmodel::Prediction::design_row)
};

// What every partition of one (layer layouts, head precision) shares: each layer type's graph,
// the embedding gather's and the head's, and the per-execute cost. Throws Error when a layer
// type has no variant in `layout.layers` or its evaluation failed.
struct MemberCosts {
  int ctx = 0;
  std::map<model::LayerType, MemberCost> layer;
  std::map<model::LayerType, model::LayerSpec> built;  // the layer each graph is built for
  MemberCost embed, head;
  double execute_ms = 0;
  std::vector<std::string> notes;  // forms priced as another (not priced yet), per layer type
};
MemberCosts price_members(Evaluator& ev, const model::ModelSpec& m, int ctx, const ModelLayout& layout);

// Prices `layout` for `m` at `ctx` from its members. Throws Error naming the limit when the
// partition breaks one of the device's (a part's weights over the binary file limit, a context
// over its limit, more binaries than a process loads).
ModelStep price_partition(const MemberCosts& members, const model::ModelSpec& m, const ModelLayout& layout,
                          const costmodel::RuntimeSpec& runtime, const std::string& device);
// Both in one.
ModelStep price_model(Evaluator& ev, const model::ModelSpec& m, int ctx, const ModelLayout& layout,
                      const costmodel::RuntimeSpec& runtime);

// The design row of one token of the layout `members` were priced for: their design rows summed
// over every decoder layer's graph (times its layer count), the embedding gather's and the head's. Under a linear
// belief the token's graph time is row . theta / 1e3: what `next` values a whole-model timing by.
// It leaves out what is not in the graphs' rows: the executes saved by merging graphs into parts
// and the host's terms (PlanOptions::whole_model_rel_sd covers them).
std::vector<double> whole_model_row(const MemberCosts& members, const model::ModelSpec& m);

// The partition of `layout` for `m` as decoder-layer index ranges, one per part holding layers.
std::vector<std::vector<int>> layer_groups(const model::ModelSpec& m, int layers_per_part);

// The layout file's record of `layout` as priced in `step` (propose --out).
WholeModelRecord model_record(const ModelLayout& layout, const ModelStep& step);
// The whole-model layout a layout file describes for `m` (step --layout-file): the per-type
// defaults and its model_layout block. Throws Error naming the file when it has no model_layout
// block, names another model or layer count, or its parts are not the partition its axes make.
ModelLayout model_layout_of(const LayoutFile& f, const model::ModelSpec& m, const std::string& path);

}  // namespace layoutx::explorer
