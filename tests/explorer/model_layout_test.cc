// The whole model as the unit of decision (issue 35): a partition's parts are priced from the
// one-layer graphs (one execute saved per merged graph), the host's terms from the runtime block,
// the device's limits refuse what cannot be built, and propose's gain by axis adds up.
#include <gtest/gtest.h>

#include <numeric>

#include "explorer/layout_file.h"
#include "explorer/model_layout.h"
#include "explorer/proposal.h"
#include "explorer/whole_step.h"
#include "model/model_loader.h"
#include "tests/explorer/fake_predictor.h"

namespace layoutx::explorer {
namespace {

using model::LayerType;
using model::Precision;

// The fake device with a graph-level execute term of 0.05 ms in every graph.
class ExecutePredictor : public testing::FakePredictor {
 public:
  costmodel::Prediction predict(const model::LayerGraph& g) const override {
    costmodel::Prediction p = FakePredictor::predict(g);
    p.ops.push_back({"graph", "Graph", "graph", kExecuteMs});
    p.latency_ms += kExecuteMs, p.low_ms += kExecuteMs, p.high_ms += kExecuteMs;
    return p;
  }
  static constexpr double kExecuteMs = 0.05;
};

costmodel::RuntimeSpec runtime() {
  costmodel::RuntimeSpec r;
  r.present = true;
  r.host_call_us = {10, 5, 100, "test"};
  r.sampling_ns_per_vocab = {2, 1, 4, "test"};
  r.host_copy_gbps = {10, 5, 20, "test"};
  r.rpc_polling_us = 1e9;  // no wake-ups
  r.wakeup_us = {100, 0, 1000, "test"};
  return r;
}

class ModelLayoutTest : public ::testing::Test {
 protected:
  ExecutePredictor predictor;
  Evaluator ev{predictor};
  model::ModelSpec spark = model::load_model("spark-x2.5-1.7b");
  ProposalOptions options() const {
    ProposalOptions o;
    o.head_precision = Precision::kW4A16;
    return o;
  }
};

// One layer a graph, the embedding and the head apart, graph execution only: the whole step of
// select and step (explorer/whole_step.h), part by part.
TEST_F(ModelLayoutTest, OneGraphALayerIsTheWholeStep) {
  ModelLayout l = team_default(spark, Precision::kW4A16, options());
  l.scope = StepScope::kGraphs;
  const ModelStep s = price_model(ev, spark, 4096, l, runtime());
  ASSERT_EQ(s.parts.size(), 30u);
  const WholeStep w = whole_step(predictor, spark, compose(ev, spark, 4096, l.layers), Precision::kW4A16);
  EXPECT_NEAR(s.graphs_ms, w.ms, 1e-9);
  EXPECT_NEAR(s.low_ms, w.low_ms, 1e-9);
  EXPECT_NEAR(s.high_ms, w.high_ms, 1e-9);
  EXPECT_EQ(s.host_ms, 0);  // graphs only
  EXPECT_NEAR(s.execute_ms, ExecutePredictor::kExecuteMs, 1e-12);
}

// What joining graphs saves beyond the execute term is a prior: its value moves the point, its
// range the bounds, per joined boundary.
TEST_F(ModelLayoutTest, TheMergeSavingPriorWidensAJoinedPartsBounds) {
  ModelLayout one = team_default(spark, Precision::kW4A16, options());
  one.layers_per_part = 0, one.embed_in_first = one.head_in_last = true;  // 30 graphs in one part
  one.scope = StepScope::kGraphs;
  costmodel::RuntimeSpec r = runtime();
  const ModelStep before = price_model(ev, spark, 4096, one, r);
  r.merge_saving_us = {20, 0, 100, "test"};
  const ModelStep after = price_model(ev, spark, 4096, one, r);
  ASSERT_EQ(after.parts.size(), 1u);
  EXPECT_NEAR(before.ms - after.ms, 29 * 0.020, 1e-9);
  EXPECT_NEAR(before.low_ms - after.low_ms, 29 * 0.100, 1e-9);
  EXPECT_NEAR(before.high_ms - after.high_ms, 0, 1e-9);
}

// Single-head attention is priced as itself (the predictor sees the per-head graph; the device's
// heads hypotheses price it), not replaced by the grouped form, and no note says otherwise.
TEST_F(ModelLayoutTest, PerHeadChainsArePricedAsThemselves) {
  ModelLayout grouped = team_default(spark, Precision::kW4A16, options()), per_head = grouped;
  for (auto& [t, v] : per_head.layers) v.set(model::HeadsForm::kPerHead);
  const ModelStep a = price_model(ev, spark, 4096, grouped, runtime()), b = price_model(ev, spark, 4096, per_head, runtime());
  EXPECT_NE(a.ms, b.ms);
  for (const auto& n : b.notes) EXPECT_EQ(n.find("not priced yet"), std::string::npos) << n;
}

// Every graph in one part: one execute instead of 30.
TEST_F(ModelLayoutTest, MergingSavesOneExecutePerMergedGraph) {
  ModelLayout apart = team_default(spark, Precision::kW4A16, options()), one = apart;
  apart.scope = one.scope = StepScope::kGraphs;
  one.layers_per_part = 0, one.embed_in_first = one.head_in_last = true;
  const ModelStep a = price_model(ev, spark, 4096, apart, runtime()), b = price_model(ev, spark, 4096, one, runtime());
  ASSERT_EQ(b.parts.size(), 1u);
  EXPECT_EQ(b.parts[0].layers.size(), 28u);
  EXPECT_EQ(b.parts[0].graphs_merged, 30);
  EXPECT_NEAR(a.graphs_ms - b.graphs_ms, 29 * ExecutePredictor::kExecuteMs, 1e-9);
  EXPECT_NEAR(a.floor_ms, b.floor_ms, 1e-12);
  EXPECT_NEAR(b.parts[0].weight_bytes, std::accumulate(a.parts.begin(), a.parts.end(), 0.0,
                                                       [](double x, const PartCost& p) { return x + p.weight_bytes; }),
              1.0);
  // Seven parts of four layers each.
  ModelLayout four = apart;
  four.layers_per_part = 4;
  EXPECT_EQ(price_model(ev, spark, 4096, four, runtime()).parts.size(), 9u);
  EXPECT_EQ(layer_groups(spark, 4).back(), (std::vector<int>{24, 25, 26, 27}));
  EXPECT_EQ(layer_groups(spark, 5).back().size(), 3u);  // 28 = 5 x 5 + 3
}

// The runner's terms: one host call a part, the new K/V entries written (a window handed back
// is copied whole), sampling over the vocabulary; each bound from its prior's end.
TEST_F(ModelLayoutTest, HostTermsFollowTheRuntimePriors) {
  ModelLayout ring = team_default(spark, Precision::kW4A16, options());
  const ModelStep s = price_model(ev, spark, 4096, ring, runtime());
  const model::LayerSpec L = spark.layer(LayerType::kSliding, 4096);
  const double entry = 2.0 * L.kv_heads * L.head_dim * 2;  // K and V, f16
  EXPECT_NEAR(s.host_calls_ms, 30 * 0.010, 1e-12);
  EXPECT_NEAR(s.kv_update_ms, 28 * entry / 10e6, 1e-12);
  EXPECT_NEAR(s.sampling_ms, spark.vocab * 2e-6, 1e-12);
  EXPECT_NEAR(s.host_low_ms, 30 * 0.005 + 28 * entry / 20e6 + spark.vocab * 1e-6, 1e-12);
  EXPECT_NEAR(s.host_high_ms, 30 * 0.100 + 28 * entry / 5e6 + spark.vocab * 4e-6, 1e-12);
  EXPECT_NEAR(s.ms, s.graphs_ms + s.host_ms, 1e-12);
  EXPECT_NEAR(s.tokens_per_s, 1e3 / s.ms, 1e-9);
  // roll: each sliding layer hands back its 511-entry window, which the host copies; a shift
  // memmoves a ring's window before the write.
  ModelLayout roll = ring, shift = ring;
  roll.layers[LayerType::kSliding] = model::preset("roll", Precision::kW4A16);
  shift.kv_update = KvUpdate::kShift;
  const double sliding = spark.count(LayerType::kSliding), full = spark.count(LayerType::kFull);
  EXPECT_NEAR(price_model(ev, spark, 4096, roll, runtime()).kv_update_ms, (sliding * 511 + full) * entry / 10e6, 1e-12);
  EXPECT_NEAR(price_model(ev, spark, 4096, shift, runtime()).kv_update_ms, (sliding * 512 + full) * entry / 10e6, 1e-12);
  // An 8-bit cache writes half the bytes.
  ModelLayout u8 = ring;
  for (auto& [t, v] : u8.layers) v.set("kv_dtype", "u8");
  EXPECT_NEAR(price_model(ev, spark, 4096, u8, runtime()).kv_update_ms, s.kv_update_ms / 2, 1e-12);
}

// The device's limits refuse a partition with the key that set them.
TEST_F(ModelLayoutTest, LimitsRefuseWhatCannotBeBuilt) {
  costmodel::RuntimeSpec r = runtime();
  r.max_binaries = 10;
  ModelLayout l = team_default(spark, Precision::kW4A16, options());
  try {
    price_model(ev, spark, 4096, l, r);
    FAIL() << "30 binaries passed a limit of 10";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("30 context binaries: over the 10 one process loads (fake-device runtime.max_binaries)"),
              std::string::npos)
        << e.what();
  }
  r.max_binaries = 0;
  r.max_binary_gb = 0.6;  // the embedding table (0.54 GB) fits; 28 layers at w4a16 (0.72 GB) do not
  l.layers_per_part = 0;
  try {
    price_model(ev, spark, 4096, l, r);
    FAIL() << "28 layers in one part passed a 0.6 GB limit";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("part 'layers 0-27' holds"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("runtime.max_binary_gb"), std::string::npos) << e.what();
  }
  // propose skips what the limits refuse, and counts it.
  ProposalOptions o = options();
  const Proposal p = propose(ev, spark, 4096, Precision::kW4A16, o, r);
  EXPECT_GT(p.partitions_refused, 0);
  for (const auto& part : p.step.parts) EXPECT_LE(part.weight_bytes, 0.6e9) << part.name;
  // ... unless the question fixed the partition: then the refusal is the answer.
  o.layers_per_part = 28;
  EXPECT_THROW(propose(ev, spark, 4096, Precision::kW4A16, o, r), Error);
}

// The gain by axis adds up to proposal - baseline; with known-good forms only, the known-good
// layout is the proposal; every partition was priced.
TEST_F(ModelLayoutTest, ProposalGainsAddUp) {
  const Proposal p = propose(ev, spark, 4096, Precision::kW4A16, options(), runtime());
  double sum = 0;
  for (const auto& g : p.gains) sum += g.delta_ms;
  EXPECT_NEAR(sum, p.step.ms - p.baseline.ms, 1e-9);
  EXPECT_FALSE(p.known_good_differs);
  EXPECT_NEAR(p.known_good.ms, p.step.ms, 1e-12);
  EXPECT_EQ(p.partitions_priced, 28 * 4);
  // The LM head at the two other precisions: more bytes read, slower on the fake device.
  ASSERT_EQ(p.head_alternatives.size(), 2u);
  EXPECT_EQ(p.head_alternatives[0].first, Precision::kFp16);
  EXPECT_GT(p.head_alternatives[0].second, p.head_alternatives[1].second);
  EXPECT_GT(p.head_alternatives[1].second, 0);
  // With every runtime prior a point (low = value = high), either end picks the same partition.
  costmodel::RuntimeSpec point = runtime();
  for (costmodel::RuntimeTerm* t : {&point.host_call_us, &point.sampling_ns_per_vocab, &point.host_copy_gbps, &point.wakeup_us})
    t->low = t->high = t->value;
  const Proposal q = propose(ev, spark, 4096, Precision::kW4A16, options(), point);
  EXPECT_FALSE(q.partition.empty());
  EXPECT_EQ(q.partition_at_low, q.partition);
  EXPECT_EQ(q.partition_at_high, q.partition);
  EXPECT_EQ(p.baseline.parts.size(), 30u);
  // The host call is the cheaper side here (10 us against a 50 us execute): merging wins.
  EXPECT_LT(p.step.parts.size(), p.baseline.parts.size());
  EXPECT_LE(p.step.ms, price_model(ev, spark, 4096, [&] {
                         ModelLayout l = p.layout;
                         l.layers_per_part = 1;
                         return l;
                       }(), runtime()).ms);
}

// propose --out's file: the layout file with a model_layout block, read back to the same layout
// and price; a file whose parts are not its axes' partition, or with no block, is refused.
TEST_F(ModelLayoutTest, TheWholeModelLayoutFileRoundTrips) {
  const Proposal p = propose(ev, spark, 4096, Precision::kW4A16, options(), runtime());
  LayoutFile f = make_layout_file(ev, spark, 4096, p.layout.layers);
  f.whole_model = model_record(p.layout, p.step);
  const std::string text = layout_file_yaml(f);
  const LayoutFile back = read_layout_file_text(text, "whole.yaml");
  ASSERT_TRUE(back.whole_model.has_value());
  const ModelLayout l = model_layout_of(back, spark, "whole.yaml");
  EXPECT_EQ(l.layers_per_part, p.layout.layers_per_part);
  EXPECT_EQ(l.embed_in_first, p.layout.embed_in_first);
  EXPECT_EQ(l.head_in_last, p.layout.head_in_last);
  EXPECT_EQ(l.layers, p.layout.layers);
  EXPECT_NEAR(price_model(ev, spark, 4096, l, runtime()).ms, p.step.ms, 1e-9);
  EXPECT_EQ(back.whole_model->parts.size(), p.step.parts.size());
  // A per-type file (select --out) has no block.
  LayoutFile per_type = f;
  per_type.whole_model.reset();
  EXPECT_THROW(model_layout_of(read_layout_file_text(layout_file_yaml(per_type), "t.yaml"), spark, "t.yaml"), Error);
  // Parts that skip a layer, or that are not the partition layers_per_part makes.
  std::string skip = text;
  const size_t at = skip.find("layers: [0, 1");
  ASSERT_NE(at, std::string::npos) << text;
  skip.replace(at, 14, "layers: [0, 2");
  try {
    read_layout_file_text(skip, "skip.yaml");
    FAIL() << "a part skipping layer 1 was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("must continue the layers in order: expected 1"), std::string::npos) << e.what();
  }
  LayoutFile other = f;
  other.whole_model->layers_per_part = 5;
  try {
    model_layout_of(read_layout_file_text(layout_file_yaml(other), "o.yaml"), spark, "o.yaml");
    FAIL() << "parts of another partition were taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("o.yaml: model_layout.parts: not the 5 layers a part"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace layoutx::explorer
