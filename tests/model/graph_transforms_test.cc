// Named graph rewrites (model/graph_transforms.h).
#include <gtest/gtest.h>

#include "model/analysis.h"
#include "model/builder.h"
#include "model/graph_transforms.h"
#include "model/model_loader.h"

namespace layoutx::model {
namespace {

// A quantized full layer's cache enters in u16: the cache inputs are u16, the quantize ops that
// read them become same-shape views that move no data, and nothing else changes.
TEST(GraphTransforms, CacheEntersInU16MakesTheBoundaryConversionsViews) {
  const ModelSpec m = load_model("spark-x2.5-1.7b");
  const LayerGraph before = build_layer_graph(m.layer(LayerType::kFull, 4096), parse_variant("ring", {"precision=w8a16"}));
  LayerGraph g = build_layer_graph(m.layer(LayerType::kFull, 4096), parse_variant("ring", {"precision=w8a16"}));
  cache_enters_in_u16(g);
  int views = 0;
  for (Role r : {Role::kKCache, Role::kVCache}) {
    const Vertex in = g.find(r);
    EXPECT_EQ(g.op(in).dtype, DType::kU16);
    EXPECT_NE(before.op(in).dtype, DType::kU16);
    for (Vertex u : g.users(in)) {
      EXPECT_NE(g.op(u).kind, OpKind::kConvert) << g.op(u).name;
      if (before.op(u).kind == OpKind::kConvert) {
        EXPECT_EQ(g.op(u).kind, OpKind::kReshape) << g.op(u).name;
        EXPECT_EQ(g.op(u).shape, g.op(in).shape) << g.op(u).name;
        ++views;
      }
    }
  }
  EXPECT_EQ(views, 2);  // K's and V's boundary quantize
  EXPECT_EQ(g.count(OpKind::kConvert), before.count(OpKind::kConvert) - 2);
  EXPECT_LT(totals(g, analyze(g)).bytes_read, totals(before, analyze(before)).bytes_read);
}

}  // namespace
}  // namespace layoutx::model
