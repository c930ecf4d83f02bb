// Live-set analysis: which cache-sized tensors are alive at once while a layer graph runs, in
// the graph's op order, in bytes as the HTP holds them (16-bit activations tiled). A side table
// keyed by vertex like model/analysis.h. What it is for: the VTCM (8 MB on SM8750) holds the
// tensors an op works on; when the cache-sized tensors alive at once exceed what is left of it,
// they spill to DRAM (costmodel/layer_features.h prices that under each hypothesis).
#pragma once
#include <cstdint>
#include <vector>

#include "model/graph.h"

namespace layoutx::costmodel {

struct LiveSet {
  // live_bytes[v]: bytes of cache-sized tensors alive while op v runs (its operands, its
  // output, and every tensor produced earlier and used later). 0 for Weight / Constant.
  std::vector<int64_t> live_bytes;
  int64_t peak_bytes = 0;
  model::Vertex peak_at = 0;  // the first op where the peak is reached
};

// A tensor is cache-sized when its tiled bytes are at least `min_bytes`. Liveness: a tensor is
// born at its producer (an Input: at its first user, when the runtime's buffer is brought in)
// and dies after its last user; a Reshape is a view of its operand (no bytes of its own, it
// extends the operand's life); an Output's copy lives only at the Output. Weights stream
// through the matrix unit's half of VTCM and are not part of this set.
// `relaid`: cache-sized Inputs re-laid into the tiled layout before their first reader that is not
// a copy (Structure::relayout_cache_inputs; layer_features.h). The tiled copy is alive from that
// reader to the last such reader; the flat input lives until the relayout and its last copy.
LiveSet live_set(const model::LayerGraph& g, int channel_pad, int64_t min_bytes,
                 const std::vector<model::Vertex>& relaid = {});

// Concat, Slice, Convert and Output copy their operand: they read a flat cache input directly.
bool is_copy(model::OpKind k);

// Appends the ops that read `v`'s data to `out`: its users, looking through views (a Reshape
// reads nothing itself; its users read `v`). An op reading it twice is listed twice.
void readers_through_views(const model::LayerGraph& g, model::Vertex v, std::vector<model::Vertex>& out);

}  // namespace layoutx::costmodel
