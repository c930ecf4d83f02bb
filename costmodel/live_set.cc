#include "costmodel/live_set.h"

#include <algorithm>

#include "costmodel/features.h"
#include "model/analysis.h"

namespace layoutx::costmodel {

bool is_copy(model::OpKind k) {
  return k == model::OpKind::kConcat || k == model::OpKind::kSlice || k == model::OpKind::kConvert ||
         k == model::OpKind::kOutput;
}

void readers_through_views(const model::LayerGraph& g, model::Vertex v, std::vector<model::Vertex>& out) {
  for (auto [it, end] = boost::out_edges(v, g.graph); it != end; ++it) {
    const model::Vertex u = boost::target(*it, g.graph);
    if (g.op(u).kind == model::OpKind::kReshape) readers_through_views(g, u, out);
    else out.push_back(u);
  }
}

LiveSet live_set(const model::LayerGraph& g, int channel_pad, int64_t min_bytes,
                 const std::vector<model::Vertex>& relaid) {
  // Only the cache-sized tensors matter, and a layer has a handful: find them first, then follow
  // each one's readers (through views) for its death, instead of scanning every op's operands.
  const std::vector<model::Vertex> order = g.topological_order();
  const size_t n = g.size();
  std::vector<size_t> pos(n, 0);
  for (size_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
  constexpr size_t kNone = static_cast<size_t>(-1);
  std::vector<int64_t> delta(order.size() + 1, 0);  // +bytes at birth, -bytes after death
  std::vector<model::Vertex> rs;
  for (model::Vertex v : order) {
    const model::OpNode& op = g.op(v);
    if (model::is_folded_weight(g, v) || op.kind == model::OpKind::kConstant || op.kind == model::OpKind::kReshape)
      continue;
    const int64_t b = tiled_bytes(op.shape, op.dtype, channel_pad, false);
    if (b < min_bytes) continue;
    // Born at its producer (an Input: at its first reader); dead after its last reader. A
    // re-laid Input's tiled copy serves the readers that are not copies.
    const bool input = op.kind == model::OpKind::kInput;
    const bool is_relaid = input && std::find(relaid.begin(), relaid.end(), v) != relaid.end();
    size_t birth = input ? kNone : pos[v], death = input ? 0 : pos[v];
    size_t tiled_birth = kNone, tiled_death = 0;
    rs.clear();
    readers_through_views(g, v, rs);
    for (model::Vertex u : rs) {
      const size_t p = pos[u];
      if (is_relaid && !is_copy(g.op(u).kind)) {
        tiled_birth = std::min(tiled_birth, p);
        tiled_death = std::max(tiled_death, p);
      } else {
        birth = std::min(birth, p);
        death = std::max(death, p);
      }
    }
    if (tiled_birth != kNone) {  // the relayout reads the flat input where the tiled copy is born
      birth = std::min(birth, tiled_birth);
      death = std::max(death, tiled_birth);
      delta[tiled_birth] += b;
      delta[tiled_death + 1] -= b;
    }
    if (birth == kNone) continue;  // an Input nothing reads
    delta[birth] += b;
    delta[death + 1] -= b;
  }
  LiveSet out;
  out.live_bytes.assign(n, 0);
  int64_t live = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    live += delta[i];
    const model::OpKind k = g.op(order[i]).kind;
    if (model::is_folded_weight(g, order[i]) || k == model::OpKind::kConstant) continue;
    out.live_bytes[order[i]] = live;
    if (live > out.peak_bytes) {
      out.peak_bytes = live;
      out.peak_at = order[i];
    }
  }
  return out;
}

}  // namespace layoutx::costmodel
