// An op-level profile as calibration records: converter-renamed rows find their op (the longest
// name that matches), each class's share is its rows' time over all rows' time, and rows that
// match nothing are reported, not dropped silently.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "costmodel/lowering.h"
#include "costmodel/op_profile_shares.h"

namespace layoutx::costmodel {
namespace {

MeasurementRecord score_join_graph() {
  MeasurementRecord g;
  g.layer = model::LayerType::kSliding;
  g.context = 4096;
  g.variant = model::parse_variant("score-join", {"precision=fp16"});
  return g;
}

// QNN's ONNX frontend: '/' -> '_' and a leading '_'.
std::string converter_name(std::string n) {
  std::replace(n.begin(), n.end(), '/', '_');
  return "_" + n;
}

TEST(OpProfileShares, NormalizesNamesAsTheConverterRewritesThem) {
  EXPECT_EQ(normalized_op_name("_attn_k_concat"), "attn_k_concat");
  EXPECT_EQ(normalized_op_name("attn/k_concat"), "attn_k_concat");
  EXPECT_EQ(normalized_op_name("MLP/Gelu//erf:0"), "mlp_gelu_erf_0");
}

TEST(OpProfileShares, EachClassGetsItsRowsTimeOverTheWhole) {
  const MeasurementRecord g = score_join_graph();
  const std::vector<LoweredOp> ops = lower(build_graph(g));
  // Every op 1 unit, copies 3; one op profiled in two parts (a decomposed op), one row the
  // converter inserted that matches nothing.
  std::vector<ProfiledOp> rows;
  std::map<std::string, double> want;
  double total = 0;
  for (const LoweredOp& op : ops) {
    const double t = op.op_class == OpClass::kDataMovement ? 3.0 : 1.0;
    rows.push_back({converter_name(op.name), t});
    want[to_string(op.op_class)] += t;
    total += t;
  }
  rows.push_back({converter_name(ops.front().name) + "_part_1", 0.5});
  want[to_string(ops.front().op_class)] += 0.5;
  rows.push_back({"converted_input_7", 1.5});
  total += 0.5 + 1.5;
  OpProfileShares s = shares_from_op_profile(g, rows, "db-op:3", "test", 0.02);
  ASSERT_EQ(s.shares.size(), want.size());
  for (const MeasurementRecord& r : s.shares) {
    const std::string cls = r.id.substr(std::string("db-op:3:").size());
    ASSERT_TRUE(want.count(cls)) << r.id;
    EXPECT_NEAR(r.share, want[cls] / total, 1e-12) << cls;
    EXPECT_EQ(r.kind, MeasurementRecord::Kind::kOpShare);
    EXPECT_EQ(graph_key(r), graph_key(g));
    EXPECT_DOUBLE_EQ(r.sd, 0.02);
  }
  EXPECT_EQ(s.unmatched, std::vector<std::string>{"converted_input_7"});
}

// "attn/scores" is a prefix of "attn/scores_cache": a row of the latter is the latter's.
TEST(OpProfileShares, ALongerNameWinsOverItsPrefix) {
  const MeasurementRecord g = score_join_graph();
  OpProfileShares s = shares_from_op_profile(g, {{"_attn_scores_cache", 2.0}, {"_attn_scores", 1.0}}, "p", "test", 0.02);
  std::vector<std::string> named;
  for (const auto& r : s.shares) named.insert(named.end(), r.ops.begin(), r.ops.end());
  std::sort(named.begin(), named.end());
  EXPECT_EQ(named, (std::vector<std::string>{"attn/scores", "attn/scores_cache"}));
  EXPECT_TRUE(s.unmatched.empty());
  // No time at all: no shares.
  EXPECT_TRUE(shares_from_op_profile(g, {{"_attn_scores", 0.0}}, "p", "test", 0.02).shares.empty());
}

}  // namespace
}  // namespace layoutx::costmodel
