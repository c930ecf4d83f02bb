// The live set against a reference that follows its definition literally: every op's operands
// scanned in order, every tensor's birth and death kept, and at each position the sum of the
// tensors alive there. live_set() finds the cache-sized tensors first, follows only their
// readers and sweeps a difference array; the two must agree on every graph.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/features.h"
#include "costmodel/layer_features.h"
#include "costmodel/live_set.h"
#include "model/analysis.h"
#include "model/builder.h"
#include "model/design_space.h"
#include "model/model_loader.h"
#include "support/error.h"

namespace layoutx::costmodel {
namespace {

LiveSet reference_live_set(const model::LayerGraph& g, int channel_pad, int64_t min_bytes,
                           const std::vector<model::Vertex>& relaid) {
  const std::vector<model::Vertex> order = g.topological_order();
  const size_t n = g.size();
  std::vector<size_t> pos(n, 0);
  for (size_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
  std::vector<model::Vertex> root(n);  // a Reshape is a view of its operand
  for (model::Vertex v : order) {
    root[v] = v;
    if (g.op(v).kind == model::OpKind::kReshape) root[v] = root[g.operands(v)[0]];
  }
  constexpr size_t kNone = static_cast<size_t>(-1);
  std::vector<size_t> birth(n, kNone), death(n, 0), tiled_birth(n, kNone), tiled_death(n, 0);
  std::vector<char> is_relaid(n, 0);
  for (model::Vertex v : relaid) is_relaid[v] = 1;
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
  for (model::Vertex v : relaid)
    if (tiled_birth[v] != kNone) {
      birth[v] = std::min(birth[v], tiled_birth[v]);
      death[v] = std::max(death[v], tiled_birth[v]);
    }
  // Each counted tensor as a (first, last, bytes) range of positions, the tiled copy as its own.
  struct Range {
    size_t first, last;
    int64_t bytes;
  };
  std::vector<Range> ranges;
  for (model::Vertex v : order) {
    const model::OpNode& op = g.op(v);
    // A weight, or a slice of one (a folded weight: heads=per_head's rows), is no activation.
    if (model::is_folded_weight(g, v) || op.kind == model::OpKind::kConstant ||
        op.kind == model::OpKind::kReshape || birth[v] == kNone)
      continue;
    const int64_t b = tiled_bytes(op.shape, op.dtype, channel_pad, false);
    if (b < min_bytes) continue;
    ranges.push_back({birth[v], death[v], b});
    if (tiled_birth[v] != kNone) ranges.push_back({tiled_birth[v], tiled_death[v], b});
  }
  // At each position, the sum over the ranges that hold it; the first position of the maximum.
  LiveSet out;
  out.live_bytes.assign(n, 0);
  for (size_t i = 0; i < order.size(); ++i) {
    const model::OpKind k = g.op(order[i]).kind;
    if (model::is_folded_weight(g, order[i]) || k == model::OpKind::kConstant) continue;
    int64_t live = 0;
    for (const Range& r : ranges)
      if (r.first <= i && i <= r.last) live += r.bytes;
    out.live_bytes[order[i]] = live;
    if (live > out.peak_bytes) {
      out.peak_bytes = live;
      out.peak_at = order[i];
    }
  }
  return out;
}

// Every point of the design space's axes (the Cartesian product; points the table refuses are
// skipped), for three model families, both layer types, contexts on both sides of the knees,
// with and without the cache re-laid, at three thresholds.
TEST(LiveSet, AgreesWithTheReferenceOnEveryGraph) {
  const model::DesignSpace& space = model::DesignSpace::shipped();
  std::vector<model::Variant> variants(1);
  for (const model::Axis& a : space.axes()) {
    std::vector<model::Variant> next;
    for (const model::Variant& v : variants)
      for (const std::string& value : a.values) {
        model::Variant w = v;
        space.set(w, a.name, value);
        next.push_back(w);
      }
    variants = std::move(next);
  }
  int graphs = 0;
  for (const char* name : {"spark-x2.5-1.7b", "gemma-3-1b"}) {
    const model::ModelSpec m = model::load_model(name);
    for (const model::Variant& v : variants)
      for (auto type : {model::LayerType::kSliding, model::LayerType::kFull})
        for (int ctx : {512, 768, 1536, 4096}) {
          if (m.count(type) == 0) continue;
          std::optional<model::LayerGraph> g;
          try {
            space.validate_for(v, model::AxisScope(m));
            g.emplace(model::build_layer_graph(m.layer(type, ctx), v));
          } catch (const Error&) {
            continue;
          }
          for (bool relay : {false, true})
            for (int64_t min_bytes : {int64_t(0), int64_t(64 * 1024), int64_t(1 << 20)}) {
              const std::vector<model::Vertex> relaid =
                  relay ? cache_inputs_read_in_place(*g, 32, static_cast<double>(min_bytes) / 1024) : std::vector<model::Vertex>{};
              const LiveSet a = live_set(*g, 32, min_bytes, relaid), b = reference_live_set(*g, 32, min_bytes, relaid);
              ASSERT_EQ(a.live_bytes, b.live_bytes) << name << " " << v.key() << " ctx " << ctx;
              ASSERT_EQ(a.peak_bytes, b.peak_bytes) << name << " " << v.key() << " ctx " << ctx;
              ASSERT_EQ(a.peak_at, b.peak_at) << name << " " << v.key() << " ctx " << ctx;
            }
          ++graphs;
        }
  }
  EXPECT_GT(graphs, 500);
}

}  // namespace
}  // namespace layoutx::costmodel
