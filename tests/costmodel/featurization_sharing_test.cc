// The featurization cache shares a graph's lowering between every structure, one op
// featurization between structures that differ only in what featurize_ops does not read
// (relayout_cache_inputs, vtcm_budget_mb, live_min_kb), and one live set per threshold and
// re-laid set (issue 34's sweep speed). Sharing must be exact: each member's featurization from
// the cache equals, bit for bit, the one the member computes alone (its ops, their features, and
// its design row).
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "costmodel/featurization_cache.h"
#include "costmodel/hypothesis_predictor.h"
#include "costmodel/layer_features.h"
#include "costmodel/predictor_factory.h"
#include "model/builder.h"
#include "model/model_loader.h"

namespace layoutx::costmodel {
namespace {

// `a` and `b` featurize alike for `d`: the same ops and op features, and the same graph-level
// terms as d's design row sees them (the cache shares a featurization between knees whose spill
// the row reads only as over or not: costmodel/featurization_cache.cc knee_effect).
void expect_same(const LayerFeatures& a, const LayerFeatures& b, const DeviceSpec& d, const std::string& at) {
  ASSERT_EQ(a.ops.size(), b.ops.size()) << at;
  ASSERT_EQ(a.op_features.size(), b.op_features.size()) << at;
  for (size_t i = 0; i < a.ops.size(); ++i) {
    EXPECT_EQ(a.ops[i].name, b.ops[i].name) << at;
    EXPECT_EQ(a.ops[i].kind, b.ops[i].kind) << at << " " << a.ops[i].name;
    EXPECT_EQ(a.ops[i].op_class, b.ops[i].op_class) << at << " " << a.ops[i].name;
    EXPECT_TRUE(a.ops[i].vertices == b.ops[i].vertices) << at << " " << a.ops[i].name;
    const OpFeatures &x = a.op_features[i], &y = b.op_features[i];
    EXPECT_EQ(x.op_class, y.op_class) << at << " " << a.ops[i].name;
    EXPECT_EQ(x.precision, y.precision) << at << " " << a.ops[i].name;
    EXPECT_EQ(x.count, y.count) << at << " " << a.ops[i].name;
    EXPECT_EQ(x.bytes, y.bytes) << at << " " << a.ops[i].name;
    EXPECT_EQ(x.macs, y.macs) << at << " " << a.ops[i].name;
  }
  EXPECT_EQ(a.precision, b.precision) << at;
  EXPECT_EQ(a.graphs, b.graphs) << at;
  EXPECT_EQ(a.peak_live_bytes, b.peak_live_bytes) << at;
  EXPECT_EQ(a.weight_bytes, b.weight_bytes) << at;
  const Eigen::VectorXd ra = layer_design_row(d, a), rb = layer_design_row(d, b);
  ASSERT_EQ(ra.size(), rb.size()) << at;
  for (Eigen::Index i = 0; i < ra.size(); ++i) EXPECT_EQ(ra[i], rb[i]) << at << " coefficient " << i;
}

// Every member of the shipped mixture on graphs with the setting `extra` (heads=per_head,
// projection=conv1x1) where the switches matter: 4-bit weights,
// an explicit softmax, caches read in place or copied, live sets below, between and above the
// knees. Returns how many member featurizations were shared.
size_t check_members(const char* extra) {
  std::ostringstream log;
  const auto pr = load_default_hypothesis_predictor(log);
  std::vector<const DeviceSpec*> specs;
  for (size_t h = 0; h < pr->size(); ++h) specs.push_back(&pr->member(h).device_spec());
  const FeaturizationCache cache;
  const model::ModelSpec m = model::load_model("spark-x2.5-1.7b");
  size_t shared = 0;
  for (const char* layout : {"ring", "roll", "score-join"})
    for (const char* precision : {"precision=fp16", "precision=w4a16"})
      for (auto t : {model::LayerType::kSliding, model::LayerType::kFull})
        for (int ctx : {768, 4096, 32768}) {
          const auto g = model::build_layer_graph(m.layer(t, ctx), model::parse_variant(layout, {precision, extra, "softmax=explicit"}));
          const MemberFeatures mf = cache.featurize(g, specs);
          EXPECT_EQ(mf.of_member.size(), specs.size());
          shared += specs.size() - mf.features.size();
          for (size_t h = 0; h < specs.size(); ++h) {
            const std::string at = std::string(layout) + " " + precision + " " + extra + " " + model::to_string(t) + " " +
                                   std::to_string(ctx) + " member " + std::to_string(h);
            expect_same(mf.features[mf.of_member[h]], featurize_layer(g, *specs[h]), *specs[h], at);
          }
        }
  return shared;
}

TEST(FeaturizationSharing, EachMembersFeaturizationIsItsOwnBitForBit) {
  EXPECT_GT(check_members("heads=grouped"), 0u);  // members did share featurizations
}

// A per-head graph: a member that prices it as its grouped twin is asked whether the twin reads a
// cache input in place (the per-head graph never does: each head slices the cache), so a
// cache-relaid member and one that reads in place keep their own featurizations (they shared
// one, and the second got the first's two re-layout copies, before this was asked of the twin).
TEST(FeaturizationSharing, PerHeadGraphsPricedAsTheirGroupedTwin) { check_members("heads=per_head"); }

// 1x1-Conv projections: w4-expanded-matmul streams their per-channel 4-bit weights packed, so its
// members share the packed members' featurization there and the expanded ones' on MatMuls.
TEST(FeaturizationSharing, ConvProjectionsUnderEveryW4Reading) { check_members("projection=conv1x1"); }

// A live-set peak asked twice of the memo is computed once and the same.
TEST(FeaturizationSharing, TheLivePeakMemoAnswersAsTheLiveSet) {
  std::ostringstream log;
  const auto pr = load_default_hypothesis_predictor(log);
  const model::ModelSpec m = model::load_model("spark-x2.5-1.7b");
  const auto g = model::build_layer_graph(m.layer(model::LayerType::kFull, 4096), model::parse_variant("ring", {"precision=w4a16"}));
  LivePeakMemo memo;
  for (size_t h = 0; h < pr->size(); ++h) {
    const DeviceSpec& d = pr->member(h).device_spec();
    LayerFeatures with = featurize_ops(g, d), alone = with;
    finish_layer_features(with, g, d, &memo);
    finish_layer_features(alone, g, d);
    expect_same(with, alone, d, "member " + std::to_string(h));
    EXPECT_EQ(with.spill_bytes, alone.spill_bytes);
  }
  EXPECT_LT(memo.entries.size(), pr->size());
}

}  // namespace
}  // namespace layoutx::costmodel
