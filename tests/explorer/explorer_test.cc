#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "costmodel/op_level_predictor.h"
#include "costmodel/hypothesis_predictor.h"
#include "costmodel/predictor_factory.h"
#include "costmodel/measurements.h"
#include "explorer/composition.h"
#include "explorer/whole_step.h"
#include "explorer/design_space.h"
#include "explorer/layout_file.h"
#include "explorer/selection.h"
#include "model/builder.h"
#include "model/model_loader.h"
#include "support/error.h"
#include "support/paths.h"
#include "tests/explorer/fake_predictor.h"
#include "tests/temp_dir.h"

namespace layoutx::explorer {
namespace {

using model::LayerType;
using model::Precision;

// The space's size is tests/model/design_space_test.cc's; here, that the explorer's enumerator
// is the table's for the precision, and the incumbents.
TEST(DesignSpace, MeaningfulVariantsAreTheTablesAtThePrecision) {
  auto vs = meaningful_variants(Precision::kW4A16);
  EXPECT_EQ(vs.size(), model::design_space().variants(model::Variant{}.set(Precision::kW4A16)).size());
  EXPECT_GT(vs.size(), 40u);  // the team's first 40 and the exporters' forms
  for (const auto& v : vs) EXPECT_EQ(v.precision(), Precision::kW4A16);
  EXPECT_EQ(incumbent(LayerType::kSliding, Precision::kFp16), model::preset("roll"));
  EXPECT_EQ(incumbent(LayerType::kFull, Precision::kFp16), model::preset("ring"));
  EXPECT_EQ(axis_changes(model::preset("roll"), model::preset("score-join")), 2);
}

class ExplorerTest : public ::testing::Test {
 protected:
  testing::FakePredictor predictor;
  Evaluator ev{predictor};
  model::ModelSpec spark = model::load_model("spark-x2.5-1.7b");
};

TEST_F(ExplorerTest, AllRollStepIsTheSumOfItsLayers) {
  Comparison c = compare(ev, spark, 4096, incumbent_assignment(spark, Precision::kW4A16));
  double sliding = ev.evaluate(spark.layer(LayerType::kSliding, 4096), model::preset("roll", Precision::kW4A16))
                       .prediction.latency_ms;
  double full = ev.evaluate(spark.layer(LayerType::kFull, 4096), model::preset("ring", Precision::kW4A16))
                    .prediction.latency_ms;
  EXPECT_NEAR(c.all_roll.ms, 21 * sliding + 7 * full, 1e-9);
  EXPECT_NEAR(c.step.ms, c.all_roll.ms, 1e-9);
  EXPECT_EQ(c.step.layers.at(LayerType::kSliding), 21);
  EXPECT_EQ(c.step.layers.at(LayerType::kFull), 7);
  EXPECT_NEAR(c.all_full.ms, 28 * full, 1e-9);
  EXPECT_NEAR(c.speedup_vs_all_full, 28 * full / (21 * sliding + 7 * full), 1e-12);
}

TEST_F(ExplorerTest, SlidingLayersAreBuiltOnceForEveryContext) {
  compare(ev, spark, 4096, incumbent_assignment(spark, Precision::kFp16));
  size_t built = ev.graphs_built();
  compare(ev, spark, 8192, incumbent_assignment(spark, Precision::kFp16));
  EXPECT_EQ(ev.graphs_built(), built + 1);  // only the full layer at the new context
}

// ... but a sliding layer with sliding_cache=context is a different graph at each context (its
// cache is context-1 slots): evaluated anew, never the other context's cached evaluation.
TEST_F(ExplorerTest, AFullLengthSlidingCacheIsBuiltAtEachContext) {
  const auto v = model::parse_variant("ring", {"sliding_cache=context", "precision=w4a16"});
  const auto& a = ev.evaluate(spark.layer(LayerType::kSliding, 1024), v);
  const size_t built = ev.graphs_built();
  const auto& b = ev.evaluate(spark.layer(LayerType::kSliding, 4096), v);
  EXPECT_EQ(ev.graphs_built(), built + 1);
  EXPECT_LT(a.prediction.latency_ms, b.prediction.latency_ms);  // 4x the cache bytes
  EXPECT_NE(Evaluator::graph_key(spark.layer(LayerType::kSliding, 1024), v),
            Evaluator::graph_key(spark.layer(LayerType::kSliding, 4096), v));
}

TEST_F(ExplorerTest, SelectionNeverChoosesARefusedVariantAndNamesTheRunnerUp) {
  Choice c = select_layer(ev, spark.layer(LayerType::kSliding, 4096), Precision::kW4A16);
  EXPECT_TRUE(c.chosen.eligible);
  EXPECT_NE(c.chosen.eval.prediction.legality.compiles, costmodel::Compiles::kNo);
  ASSERT_TRUE(c.runner_up.has_value());
  EXPECT_NEAR(c.margin_ms, c.runner_up->eval.prediction.latency_ms - c.chosen.eval.prediction.latency_ms, 1e-12);
  int refused = 0, explicit_softmax = 0;
  for (const auto& k : c.candidates) {
    refused += !k.eligible;
    explicit_softmax += k.eval.variant.softmax() == model::SoftmaxForm::kExplicit;
  }
  EXPECT_GT(explicit_softmax, 0);
  EXPECT_EQ(refused, explicit_softmax);  // every explicit-softmax variant (its ReduceMax), only those
  // ring-like (new_entry) variants move a window less: the chosen one returns the new entry.
  EXPECT_EQ(c.chosen.eval.variant.returns(), model::KvReturn::kNewEntry);
}

// A fixed axis the search keeps at its default (projection, heads: not explored) is set on every
// candidate, so the question is searched among them (it found no variant before); a fixed axis
// it explores keeps the candidates holding the value.
TEST_F(ExplorerTest, AFixedAxisTheSearchDoesNotExploreIsSetOnEveryCandidate) {
  SelectionPolicy conv;
  conv.fixed_axes["projection"] = "conv1x1";
  conv.fixed_axes["heads"] = "per_head";
  conv.fixed_axes["returns"] = "new_entry";
  Choice c = select_layer(ev, spark.layer(LayerType::kSliding, 4096), Precision::kW4A16, conv);
  ASSERT_FALSE(c.candidates.empty());
  for (const auto& k : c.candidates) {
    EXPECT_EQ(k.eval.variant.projection(), model::ProjectionForm::kConv1x1) << k.eval.variant.key();
    EXPECT_EQ(k.eval.variant.heads(), model::HeadsForm::kPerHead) << k.eval.variant.key();
    EXPECT_EQ(k.eval.variant.returns(), model::KvReturn::kNewEntry) << k.eval.variant.key();
  }
  EXPECT_EQ(c.chosen.eval.variant.projection(), model::ProjectionForm::kConv1x1);
  SelectionPolicy open;
  open.fixed_axes["returns"] = "new_entry";
  EXPECT_EQ(select_layer(ev, spark.layer(LayerType::kSliding, 4096), Precision::kW4A16, open).candidates.size(),
            c.candidates.size());  // as many: set, not multiplied
}

TEST_F(ExplorerTest, UntestedCandidatesDoNotWinButAreListedWithTheirSaving) {
  // Under the fake predictor the score-space join skips the full cache's Concat: fastest at 4k.
  const model::LayerSpec full = spark.layer(LayerType::kFull, 4096);
  Choice open = select_layer(ev, full, Precision::kFp16);
  ASSERT_EQ(open.chosen.eval.variant.join(), model::Join::kScores);
  EXPECT_TRUE(open.untested.empty());

  predictor.scores_join_outcome = costmodel::Compiles::kContested;
  Evaluator fresh{predictor};
  Choice c = select_layer(fresh, full, Precision::kFp16);
  EXPECT_EQ(c.chosen.eval.variant.join(), model::Join::kKeys);
  EXPECT_FALSE(c.chose_untested);
  ASSERT_FALSE(c.untested.empty());
  for (const auto& u : c.untested) {
    EXPECT_EQ(u.candidate.eval.variant.join(), model::Join::kScores);
    EXPECT_NEAR(u.saving_ms, c.chosen.eval.prediction.latency_ms - u.candidate.eval.prediction.latency_ms, 1e-12);
    EXPECT_GT(u.saving_ms, 0.01 * c.chosen.eval.prediction.latency_ms);  // more than the minimum gain
    EXPECT_NE(u.settle.find("records disagree"), std::string::npos) << u.settle;
  }
  EXPECT_LE(c.untested.size(), 3u);
  if (c.runner_up) {
    EXPECT_EQ(c.runner_up->eval.prediction.legality.compiles, costmodel::Compiles::kYes);
  }

  SelectionPolicy allow;
  allow.allow_untested = true;
  Choice a = select_layer(fresh, full, Precision::kFp16, allow);
  EXPECT_EQ(a.chosen.eval.variant, open.chosen.eval.variant);
  EXPECT_TRUE(a.chose_untested);
  EXPECT_TRUE(a.untested.empty());
  EXPECT_NE(a.why.find("--allow-untested"), std::string::npos) << a.why;
}

TEST_F(ExplorerTest, TheRunnerUpIsNotATwinOfTheChosen) {
  Choice c = select_layer(ev, spark.layer(LayerType::kSliding, 4096), Precision::kFp16);
  ASSERT_TRUE(c.runner_up.has_value());
  EXPECT_GT(std::abs(c.margin_ms), 0.01 * c.chosen.eval.prediction.latency_ms);
}

TEST_F(ExplorerTest, AmongTiedCandidatesTheFewestAxisChangesWin) {
  predictor.rel_halfwidth = 0.5;  // everything overlaps: a tie among all
  Choice c = select_layer(ev, spark.layer(LayerType::kSliding, 4096), Precision::kFp16);
  EXPECT_TRUE(c.tie);
  EXPECT_EQ(c.chosen.axis_changes, 0);  // the incumbent itself
  EXPECT_EQ(c.chosen.eval.variant, model::preset("roll"));
  EXPECT_GT(c.tied.size(), 1u);
  for (const auto& t : c.tied) {
    EXPECT_GE(t.p_faster_than_chosen, 0.0);
    EXPECT_LE(t.p_faster_than_chosen, 1.0);
  }
}

TEST_F(ExplorerTest, ProbabilityFasterIsSymmetric) {
  costmodel::Prediction a, b;
  a.latency_ms = 1.0, a.low_ms = 0.9, a.high_ms = 1.1;
  b.latency_ms = 1.1, b.low_ms = 1.0, b.high_ms = 1.2;
  double p = predictor.probability_faster(a, b);
  EXPECT_GT(p, 0.5);
  EXPECT_NEAR(p + predictor.probability_faster(b, a), 1.0, 1e-12);
}

TEST_F(ExplorerTest, CrossoverIsWhereTheHybridStartsToWin) {
  auto fixed = [&](int) { return incumbent_assignment(spark, Precision::kFp16); };
  Sweep s = sweep(ev, spark, 512, 32768, fixed);
  ASSERT_TRUE(s.crossover_ctx.has_value());
  int x = *s.crossover_ctx;
  auto diff = [&](int ctx) {
    Comparison c = compare(ev, spark, ctx, fixed(ctx));
    return c.step.ms - c.all_full.ms;
  };
  EXPECT_LT(diff(x), 0.0);
  if (x > 512) {
    EXPECT_GE(diff(x - 1), 0.0);
  }
  EXPECT_EQ(s.points.front().ctx, 512);
  EXPECT_EQ(s.points.back().ctx, 32768);
}

TEST_F(ExplorerTest, ContextBelowTheWindowIsAClearError) {
  try {
    compare(ev, spark, 256, incumbent_assignment(spark, Precision::kFp16));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ctx: 256 is below the sliding window"), std::string::npos) << e.what();
  }
}

TEST_F(ExplorerTest, LayoutFileRoundTrips) {
  Assignment a = incumbent_assignment(spark, Precision::kW4A16);
  a[LayerType::kSliding] = model::preset("ring", Precision::kW4A16);
  LayoutFile f = make_layout_file(ev, spark, 4096, a);
  ASSERT_EQ(f.layers.size(), 28u);
  EXPECT_EQ(f.layers[3].type, LayerType::kFull);
  EXPECT_EQ(f.layers[3].cache_entries, 4095);
  EXPECT_EQ(f.layers[0].cache_entries, 511);
  layoutx::test::TempDir dir("layout-test");
  const std::string path = dir / "layout.yaml";
  write_layout_file(f, path);
  LayoutFile g = read_layout_file(path);
  EXPECT_EQ(g.model, f.model);
  EXPECT_EQ(g.context, 4096);
  EXPECT_EQ(g.precision, Precision::kW4A16);
  ASSERT_EQ(g.layers.size(), 28u);
  EXPECT_EQ(g.defaults.at(LayerType::kSliding).variant, model::preset("ring", Precision::kW4A16));
  EXPECT_EQ(g.layers[27].variant, model::preset("ring", Precision::kW4A16));
  EXPECT_NEAR(g.step_ms, f.step_ms, 1e-6 * f.step_ms);  // six significant digits in the file
}


// The calibrated predictor knows two variants' errors are correlated: the interval of their
// difference is narrower than the marginal intervals taken as independent, and zero for a
// variant against itself.
TEST(DifferenceInterval, SharedCoefficientsNarrowTheDifference) {
  std::ostringstream log;
  auto pr = costmodel::load_default_predictor(log);
  auto m = model::load_model("spark-x2.5-1.7b");
  auto l = m.layer(LayerType::kSliding, 4096);
  auto a = pr->predict(model::build_layer_graph(l, model::preset("roll", Precision::kW8A16)));
  auto b = pr->predict(model::build_layer_graph(l, model::preset("ring", Precision::kW8A16)));
  EXPECT_NEAR(pr->difference_half_width_ms(a, a), 0.0, 1e-12);
  double diff = pr->difference_half_width_ms(a, b);
  EXPECT_GT(diff, 0.0);
  EXPECT_LT(diff, pr->costmodel::Predictor::difference_half_width_ms(a, b));
  EXPECT_NEAR(pr->latency_from_row(a.design_row), a.latency_ms, 1e-9);
}


// Golden: on the calibration data's roll figures (the first export: sliding roll, full layers
// concatenating keys and returning the new entry), the composed all-roll step equals the sum of
// the per-layer predictions, and lands within the calibration's error of the measured per-layer
// sums 21 x sliding + 7 x full. The measured figures are read from the shipped data.
TEST(Golden, AllRollCompositionOnTheCalibrationData) {
  std::ostringstream log;
  auto pr = costmodel::load_default_hypothesis_predictor(log);  // the model the verbs use
  auto spark = model::load_model("spark-x2.5-1.7b");
  auto records = costmodel::load_measurements(config_path("calibration/spark-s25-measurements.yaml"));
  auto measured = [&](LayerType t, int ctx, Precision p) {
    for (const auto& r : records)
      if (r.kind == costmodel::MeasurementRecord::Kind::kLayerTime && r.layer == t && r.variant == incumbent(t, p) &&
          (t == LayerType::kSliding || r.context == ctx))
        return r.ms;
    return -1.0;
  };
  int checked = 0;
  for (auto p : {Precision::kFp16, Precision::kW8A16, Precision::kW4A16})
    for (int ctx : {1024, 4096}) {
      double ms_sliding = measured(LayerType::kSliding, ctx, p), ms_full = measured(LayerType::kFull, ctx, p);
      ASSERT_GT(ms_sliding, 0);
      ASSERT_GT(ms_full, 0);
      Evaluator ev(*pr);
      Comparison c = compare(ev, spark, ctx, incumbent_assignment(spark, p));
      EXPECT_NEAR(c.all_roll.ms, 21 * c.all_roll.per_layer_ms.at(LayerType::kSliding) +
                                     7 * c.all_roll.per_layer_ms.at(LayerType::kFull), 1e-9);
      const double measured_step = 21 * ms_sliding + 7 * ms_full;
      // 8%: the calibration reproduces single layers within its stated 15% (sliding w8a16 +10%).
      EXPECT_NEAR(c.all_roll.ms / measured_step, 1.0, 0.08) << to_string(p) << " ctx " << ctx;
      EXPECT_LE(c.all_roll.low_ms, measured_step);
      EXPECT_GE(c.all_roll.high_ms, measured_step);
      ++checked;
    }
  EXPECT_EQ(checked, 6);
}


// A change must earn its place: with no model uncertainty at all, a candidate within the minimum
// gain of the fastest still ties with it, and the one with the fewest axis changes wins; with
// the minimum gain off, the strictly fastest wins.
TEST(MinimumGain, SmallGainsDoNotEarnAChange) {
  testing::FakePredictor predictor;
  predictor.rel_halfwidth = 0.0;  // the difference interval is zero: only the minimum gain can tie
  Evaluator ev{predictor};
  const auto spark = model::load_model("spark-x2.5-1.7b");
  const auto layer = spark.layer(LayerType::kSliding, 4096);
  SelectionPolicy strict;
  strict.min_gain_fraction = 0.0;
  const Choice fastest = select_layer(ev, layer, Precision::kFp16, strict);
  for (const auto& k : fastest.candidates) {
    if (k.eligible) {
      EXPECT_GE(k.eval.prediction.latency_ms, fastest.chosen.eval.prediction.latency_ms);
    }
  }

  SelectionPolicy lenient;
  lenient.min_gain_fraction = 0.05;
  const Choice c = select_layer(ev, layer, Precision::kFp16, lenient);
  const double best = fastest.chosen.eval.prediction.latency_ms;
  EXPECT_LE(c.chosen.eval.prediction.latency_ms, best * 1.05 + 1e-12);
  // Nothing within 5% of the fastest changes fewer axes than the chosen one.
  for (const auto& k : c.candidates) {
    if (k.eligible && k.eval.prediction.latency_ms <= best * 1.05) {
      EXPECT_GE(k.axis_changes, c.chosen.axis_changes);
    }
  }
  // The fake prices ops and bytes: some candidate within 5% changes fewer axes than the fastest.
  EXPECT_LT(c.chosen.axis_changes, fastest.chosen.axis_changes);
}

}  // namespace
}  // namespace layoutx::explorer

namespace layoutx::explorer {
namespace {

// The whole step adds the embedding gather and the final norm + LM head graphs to the layers;
// the LM head reads vocab x hidden weights at its precision, so at w8a16 it is priced at least
// at their bytes over DRAM peak and halving them (w4a16 packed) cannot make it dearer.
TEST(WholeStep, LayersPlusEmbeddingPlusHead) {
  std::ostringstream log;
  auto pr = costmodel::load_default_hypothesis_predictor(log);
  auto spark = model::load_model("spark-x2.5-1.7b");
  Evaluator ev(*pr);
  StepResult layers = compose(ev, spark, 1024, incumbent_assignment(spark, model::Precision::kW8A16));
  WholeStep w = whole_step(*pr, spark, layers, model::Precision::kW8A16);
  EXPECT_NEAR(w.ms, layers.ms + w.embed_ms + w.head_ms, 1e-9);
  EXPECT_GT(w.lm_head_ms, 0);
  EXPECT_LE(w.lm_head_ms, w.head_ms);
  const double lm_bytes = double(spark.vocab) * spark.hidden;  // 8-bit weights
  EXPECT_GE(w.lm_head_ms, lm_bytes / (84.8e9) * 1e3 * 0.999);
  EXPECT_NEAR(w.tokens_per_s, 1e3 / w.ms, 1e-9);
  EXPECT_NEAR(w.lm_head_share, w.lm_head_ms / w.ms, 1e-12);
  WholeStep fp16 = whole_step(*pr, spark, layers, model::Precision::kFp16);
  EXPECT_GT(fp16.lm_head_ms, w.lm_head_ms);
}

}  // namespace
}  // namespace layoutx::explorer
