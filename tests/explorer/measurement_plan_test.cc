// layoutx next's value of information: the knowledge gradient against its closed form for two
// candidates, zero when nothing can change, compile-only checks from untested candidates.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "explorer/measurement_plan.h"
#include "model/model_loader.h"
#include "support/error.h"

namespace layoutx::explorer {
namespace {

// A linear model with two coefficients (us per feature unit) and a chosen covariance.
class LinearBeliefPredictor : public costmodel::Predictor {
 public:
  costmodel::CoefficientBelief b;
  costmodel::Prediction predict(const model::LayerGraph&) const override { return {}; }
  std::string device() const override { return "linear"; }
  std::string calibration_id() const override { return "linear"; }
  std::optional<costmodel::CoefficientBelief> belief() const override { return b; }
};

Candidate arm(const model::Variant& v, std::vector<double> row, const std::vector<double>& theta,
              costmodel::Compiles compiles = costmodel::Compiles::kYes) {
  Candidate k;
  k.eligible = true;
  k.eval.variant = v;
  k.eval.prediction.design_row = std::move(row);
  for (size_t i = 0; i < theta.size(); ++i) k.eval.prediction.latency_ms += k.eval.prediction.design_row[i] * theta[i] / 1e3;
  k.eval.prediction.legality.compiles = compiles;
  return k;
}

struct TwoArms {
  LinearBeliefPredictor pr;
  Decision d;
  TwoArms(double var0, double var1, double rel) {
    pr.b.mean = {1000.0, 500.0};  // us per unit
    pr.b.covariance = {var0, 0.0, 0.0, var1};
    pr.b.noise_rel_sd = rel;
    model::ModelSpec m = model::load_model("spark-x2.5-1.7b");
    d.ctx = 4096;
    d.count = 7;
    d.layer = m.layer(model::LayerType::kFull, 4096);
    // Two candidates: one heavy on feature 0, one on feature 1; close in latency.
    d.choice.candidates.push_back(arm(model::preset("ring"), {1.0, 0.1}, pr.b.mean));   // 1.05 ms
    d.choice.candidates.push_back(arm(model::preset("roll"), {0.1, 1.9}, pr.b.mean));   // 1.05 ms
    d.choice.candidates[1].eval.prediction.latency_ms += 0.01;
    d.choice.candidates[1].eval.prediction.design_row[1] += 0.02;  // keep latency = row . theta
  }
};

double phi(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI); }
double Phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

TEST(MeasurementPlan, TimingValueIsTheKnowledgeGradientOfItsClosedForm) {
  TwoArms s(400.0, 900.0, 0.0);
  PlanOptions opt;
  opt.timing_rel_sd = 0.02;
  auto plan = plan_measurements(s.pr, {s.d}, opt);
  ASSERT_EQ(plan.size(), 2u);
  for (const auto& m : plan) {
    // Closed form: y = x . theta / 1e3 + noise; each arm's posterior mean a_k + b_k z.
    const auto& x = m.variant == model::preset("ring") ? s.d.choice.candidates[0] : s.d.choice.candidates[1];
    const auto& X = x.eval.prediction.design_row;
    const double L = x.eval.prediction.latency_ms;
    auto cov = [&](const std::vector<double>& r) { return (r[0] * 400.0 * X[0] + r[1] * 900.0 * X[1]) / 1e6; };
    const double sd_y = std::sqrt(cov(X) + std::pow(0.02 * L, 2));
    const auto& A = s.d.choice.candidates[0].eval.prediction;
    const auto& B = s.d.choice.candidates[1].eval.prediction;
    const double da = A.latency_ms - B.latency_ms, db = (cov(A.design_row) - cov(B.design_row)) / sd_y;
    // E[min(a1 + b1 z, a2 + b2 z)] = a1 - E[max(0, da + db z)].
    const double e_max = da * Phi(da / std::abs(db)) + std::abs(db) * phi(da / std::abs(db));
    const double kg = std::min(A.latency_ms, B.latency_ms) - (A.latency_ms - e_max);
    EXPECT_NEAR(m.value_ms, 7 * kg, 1e-4 * 7 * kg + 1e-9) << m.variant.key();
    EXPECT_GT(m.value_ms, 0.0);
    EXPECT_GT(m.p_choice_changes, 0.0);
    EXPECT_LT(m.p_choice_changes, 1.0);
  }
  EXPECT_GE(plan[0].value_ms, plan[1].value_ms);
}

// A whole-model timing (next --whole-model) is valued as a timing of its summed design row: with
// no extra scatter, a "whole model" made of 3 ring graphs is worth what timing that row would be
// worth, and a larger whole_model_rel_sd makes it worth less.
TEST(MeasurementPlan, AWholeModelTimingIsValuedAsATimingOfItsRow) {
  TwoArms s(400.0, 900.0, 0.0);
  PlanOptions opt;
  opt.whole_model_rel_sd = 0;
  const auto& ring = s.d.choice.candidates[0].eval.prediction;
  WholeModelCandidate c{"three rings", 4096, 3 * ring.latency_ms, {3 * ring.design_row[0], 3 * ring.design_row[1]}};
  // Three times the ring's row, timed with three times its scatter, is the ring's timing: worth
  // the same.
  const auto whole = value_whole_models(s.pr, {s.d}, {c}, opt);
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0].kind, PlannedMeasurement::Kind::kWholeModel);
  EXPECT_EQ(whole[0].whole_model, "three rings");
  const auto plan = plan_measurements(s.pr, {s.d}, opt);
  const auto timed_ring = std::find_if(plan.begin(), plan.end(), [](const auto& m) { return m.variant == model::preset("ring"); });
  ASSERT_NE(timed_ring, plan.end());
  EXPECT_GT(whole[0].value_ms, 0.0);
  EXPECT_NEAR(whole[0].value_ms, timed_ring->value_ms, 1e-9 + 1e-6 * timed_ring->value_ms);
  opt.whole_model_rel_sd = 0.3;
  EXPECT_LT(value_whole_models(s.pr, {s.d}, {c}, opt)[0].value_ms, whole[0].value_ms);
  c.row.push_back(1.0);  // not the belief's size
  EXPECT_THROW(value_whole_models(s.pr, {s.d}, {c}, opt), Error);
}

TEST(MeasurementPlan, NothingToLearnWhenTheCoefficientsAreKnown) {
  TwoArms s(0.0, 0.0, 0.0);
  for (const auto& m : plan_measurements(s.pr, {s.d})) {
    EXPECT_NEAR(m.value_ms, 0.0, 1e-12);
    EXPECT_NEAR(m.p_choice_changes, 0.0, 1e-12);
  }
}

TEST(MeasurementPlan, AGraphAlreadyTimedIsNotProposedAgain) {
  TwoArms s(400.0, 900.0, 0.05);
  PlanOptions opt;
  opt.already_timed.insert(graph_key(s.d.layer, model::preset("ring")));
  auto plan = plan_measurements(s.pr, {s.d}, opt);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].variant, model::preset("roll"));
}

// The same linear model whose graphs split by op class: class "a" holds feature 0, "b" feature 1.
class ClassRowsPredictor : public LinearBeliefPredictor {
 public:
  std::vector<double> row;  // the timed graph's design row
  std::vector<std::pair<std::string, std::vector<double>>> class_rows(const model::LayerGraph&) const override {
    return {{"a", {row[0], 0.0}}, {"b", {0.0, row[1]}}};
  }
};

// An op-level profile is proposed only for a graph already timed, and is worth the knowledge
// gradient of its most valuable class's time (observed with share_sd x the layer's latency).
TEST(MeasurementPlan, AnOpProfileOfATimedGraphIsWorthItsBestClassObservation) {
  TwoArms s(400.0, 900.0, 0.0);
  ClassRowsPredictor pr;
  pr.b = s.pr.b;
  const auto& ring = s.d.choice.candidates[0].eval.prediction;
  pr.row = ring.design_row;
  PlanOptions opt;
  opt.share_sd = 0.02;
  const auto untimed = plan_measurements(pr, {s.d}, opt);
  EXPECT_TRUE(std::none_of(untimed.begin(), untimed.end(),
                           [](const auto& m) { return m.kind == PlannedMeasurement::Kind::kOpProfile; }))
      << "no graph is timed: no op profile";
  opt.already_timed.insert(graph_key(s.d.layer, model::preset("ring")));
  auto plan = plan_measurements(pr, {s.d}, opt);
  ASSERT_EQ(plan.size(), 2u);  // a timing of roll, a profile of ring
  const auto it = std::find_if(plan.begin(), plan.end(), [](const auto& m) { return m.kind == PlannedMeasurement::Kind::kOpProfile; });
  ASSERT_NE(it, plan.end());
  EXPECT_EQ(it->variant, model::preset("ring"));
  // Closed form for each class: y = x_c . theta / 1e3 + noise (sd 0.02 x ring's latency).
  const auto& A = s.d.choice.candidates[0].eval.prediction;
  const auto& B = s.d.choice.candidates[1].eval.prediction;
  double best = 0;
  std::string best_class;
  for (int c = 0; c < 2; ++c) {
    std::vector<double> X{c == 0 ? ring.design_row[0] : 0.0, c == 1 ? ring.design_row[1] : 0.0};
    auto cov = [&](const std::vector<double>& r) { return (r[0] * 400.0 * X[0] + r[1] * 900.0 * X[1]) / 1e6; };
    const double sd_y = std::sqrt(cov(X) + std::pow(0.02 * ring.latency_ms, 2));
    const double da = A.latency_ms - B.latency_ms, db = (cov(A.design_row) - cov(B.design_row)) / sd_y;
    const double e_max = da * Phi(da / std::abs(db)) + std::abs(db) * phi(da / std::abs(db));
    const double kg = 7 * (std::min(A.latency_ms, B.latency_ms) - (A.latency_ms - e_max));
    if (kg > best) best = kg, best_class = c == 0 ? "a" : "b";
  }
  EXPECT_GT(best, 0.0);
  EXPECT_NEAR(it->value_ms, best, 1e-4 * best);
  EXPECT_EQ(it->profile_class, best_class);
  EXPECT_STREQ(to_string(it->kind), "op-profile");
}

TEST(MeasurementPlan, ACompileOnlyCheckIsWorthItsCompileProbabilityTimesTheSaving) {
  TwoArms s(0.0, 0.0, 0.0);
  Candidate fast = arm(model::preset("score-join"), {0.5, 0.1}, s.pr.b.mean, costmodel::Compiles::kContested);
  fast.eval.prediction.legality.reasons = {"score-join: attn/scores (...) at fp16: contested: ..."};
  Untested u;
  u.candidate = fast;
  u.saving_ms = s.d.choice.candidates[0].eval.prediction.latency_ms - fast.eval.prediction.latency_ms;
  s.d.choice.untested.push_back(u);
  Decision twice = s.d;
  twice.ctx = 1024;  // the same question at another context adds its saving
  auto plan = plan_measurements(s.pr, {s.d, twice});
  const PlannedMeasurement* c = nullptr;
  for (const auto& m : plan)
    if (m.kind == PlannedMeasurement::Kind::kCompileOnly) c = &m;
  ASSERT_NE(c, nullptr);
  EXPECT_NEAR(c->value_ms, 2 * 0.5 * u.saving_ms * 7, 1e-12);
  EXPECT_EQ(c->legality_question, "score-join at fp16 (contested)");
  EXPECT_EQ(c->graphs_sharing, 1);  // one graph: the decisions' layers have the same shape
  EXPECT_EQ(plan.front().kind, PlannedMeasurement::Kind::kCompileOnly);  // the timings are worth 0 here
}

TEST(MeasurementPlan, APredictorWithoutABeliefIsAnError) {
  class NoBelief : public costmodel::Predictor {
    costmodel::Prediction predict(const model::LayerGraph&) const override { return {}; }
    std::string device() const override { return "x"; }
    std::string calibration_id() const override { return "x"; }
  } pr;
  EXPECT_THROW(plan_measurements(pr, {}), Error);
}

}  // namespace
}  // namespace layoutx::explorer
