#include "costmodel/live_set.h"

#include "costmodel/features.h"

namespace layoutx::costmodel {

bool is_copy(model::OpKind k) {
  return k == model::OpKind::kConcat || k == model::OpKind::kSlice || k == model::OpKind::kConvert ||
         k == model::OpKind::kOutput;
}

LiveSet live_set(const model::LayerGraph& g, int channel_pad, int64_t min_bytes,
                 const std::vector<model::Vertex>& relaid) {
  const std::vector<model::Vertex> order = g.topological_order();
  const size_t n = g.size();
  std::vector<size_t> pos(n, 0);
  for (size_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
  // The tensor a vertex's data lives in: a Reshape aliases its operand.
  std::vector<model::Vertex> root(n);
  for (model::Vertex v : order) {
    root[v] = v;
    if (g.op(v).kind == model::OpKind::kReshape) root[v] = root[g.operands(v)[0]];
  }
  // Birth and death positions of each root tensor.
  constexpr size_t kNone = static_cast<size_t>(-1);
  std::vector<size_t> birth(n, kNone), death(n, 0);
  // The tiled copies of the relaid inputs: their birth and death (kNone: none).
  std::vector<char> is_relaid(n, 0);
  for (model::Vertex v : relaid) is_relaid[v] = 1;
  std::vector<size_t> tiled_birth(n, kNone), tiled_death(n, 0);
  for (model::Vertex v : order) {
    const model::OpKind k = g.op(v).kind;
    if (k != model::OpKind::kInput && k != model::OpKind::kReshape) {
      birth[v] = std::min(birth[v], pos[v]);
      death[v] = std::max(death[v], pos[v]);
    }
    if (k == model::OpKind::kReshape) continue;
    for (model::Vertex u : g.operands(v)) {
      const model::Vertex r = root[u];
      if (is_relaid[r] && !is_copy(k)) {
        tiled_birth[r] = std::min(tiled_birth[r], pos[v]);
        tiled_death[r] = std::max(tiled_death[r], pos[v]);
        continue;
      }
      birth[r] = std::min(birth[r], pos[v]);
      death[r] = std::max(death[r], pos[v]);
    }
  }
  // The relayout reads the flat input where the tiled copy is born.
  for (model::Vertex v : relaid)
    if (tiled_birth[v] != kNone) {
      birth[v] = std::min(birth[v], tiled_birth[v]);
      death[v] = std::max(death[v], tiled_birth[v]);
    }
  LiveSet out;
  out.live_bytes.assign(n, 0);
  // Sweep: +bytes at birth, -bytes after death (difference array over positions).
  std::vector<int64_t> delta(order.size() + 1, 0);
  for (model::Vertex v : order) {
    const model::OpNode& op = g.op(v);
    if (op.kind == model::OpKind::kWeight || op.kind == model::OpKind::kConstant ||
        op.kind == model::OpKind::kReshape || birth[v] == kNone)
      continue;
    const int64_t b = tiled_bytes(op.shape, op.dtype, channel_pad, false);
    if (b < min_bytes) continue;
    delta[birth[v]] += b;
    delta[death[v] + 1] -= b;
    if (tiled_birth[v] != kNone) {
      delta[tiled_birth[v]] += b;
      delta[tiled_death[v] + 1] -= b;
    }
  }
  int64_t live = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    live += delta[i];
    const model::OpKind k = g.op(order[i]).kind;
    if (k == model::OpKind::kWeight || k == model::OpKind::kConstant) continue;
    out.live_bytes[order[i]] = live;
    if (live > out.peak_bytes) {
      out.peak_bytes = live;
      out.peak_at = order[i];
    }
  }
  return out;
}

}  // namespace layoutx::costmodel
