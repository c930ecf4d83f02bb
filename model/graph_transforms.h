// Named rewrites of a built layer graph: forms a runtime gives the graph that the builder does
// not spell (model/builder.h builds the exporter's form). Each says what it models.
#pragma once
#include "model/graph.h"

namespace layoutx::model {

// The K/V cache enters already in 16-bit fixed point (u16): the runtime keeps the cache in the
// quantized form the layer computes in, so the exporter's boundary quantize ops are not needed.
// Models the third export's "cache in u16" form: the K and V cache inputs become u16 and each
// Convert reading them becomes a Reshape to the same shape (a view: not lowered, moves no data;
// the live set treats it as its operand). Other users of the cache inputs are unchanged.
// Needs a graph with K and V cache inputs (g.find throws otherwise).
void cache_enters_in_u16(LayerGraph& g);

}  // namespace layoutx::model
