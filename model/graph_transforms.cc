#include "model/graph_transforms.h"

namespace layoutx::model {

void cache_enters_in_u16(LayerGraph& g) {
  for (Role r : {Role::kKCache, Role::kVCache}) {
    const Vertex in = g.find(r);
    g.graph[in].dtype = DType::kU16;
    for (Vertex u : g.users(in))
      if (g.op(u).kind == OpKind::kConvert) g.graph[u].kind = OpKind::kReshape;
  }
}

}  // namespace layoutx::model
