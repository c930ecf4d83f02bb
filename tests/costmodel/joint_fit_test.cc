// The joint fit over public records (costmodel/joint_fit.h) on synthetic records whose truth is known.
#include "costmodel/joint_fit.h"

#include <gtest/gtest.h>

#include <cmath>

#include "support/error.h"

namespace {

using layoutx::costmodel::fit_joint;
using layoutx::costmodel::joint_term;
using layoutx::costmodel::JointObservation;
using layoutx::costmodel::JointTerm;
using layoutx::costmodel::normal_mixture_quantile;
using layoutx::costmodel::predict_joint;

// A record on another chip (term 0) whose true factor is `factor`, priced by two hypotheses:
// hypothesis 0 prices it right, hypothesis 1 twice too slow on the odd records.
JointObservation record(double price, double factor, int i) {
  JointObservation o;
  o.published_ms = price * factor;
  o.log_sd = 0.05;
  o.terms = {0};
  o.price_ms = {price, i % 2 ? 2 * price : price};
  return o;
}

TEST(JointFit, WithoutRecordsATermIsItsPrior) {
  const std::vector<JointTerm> terms = {{"chip x", 0.8, 0.3}};
  const auto fit = fit_joint(terms, {}, {0.25, 0.75});
  ASSERT_EQ(fit.weights.size(), 2u);
  EXPECT_NEAR(fit.weights[0], 0.25, 1e-12);  // nothing to weigh them by
  const auto q = joint_term(fit, 0, 0.90);
  EXPECT_NEAR(q.median, 0.8, 1e-6);
  EXPECT_NEAR(std::log(q.high / q.median), 1.6449 * 0.3, 1e-3);
  EXPECT_NEAR(std::log(q.median / q.low), 1.6449 * 0.3, 1e-3);
}

TEST(JointFit, RecordsFindTheFactorAndTheHypothesisThatPricesThem) {
  const std::vector<JointTerm> terms = {{"chip x", 1.0, 0.3}};
  std::vector<JointObservation> obs;
  for (int i = 0; i < 6; ++i) obs.push_back(record(10.0 + 7 * i, 0.6, i));
  const auto fit = fit_joint(terms, obs, {0.5, 0.5});
  EXPECT_GT(fit.weights[0], 0.99);
  EXPECT_TRUE(fit.members[0].converged);
  const auto q = joint_term(fit, 0, 0.90);
  EXPECT_NEAR(q.median, 0.6, 0.02);
  EXPECT_LT(q.low, 0.6);
  EXPECT_GT(q.high, 0.6);
  EXPECT_LT(std::log(q.high / q.low), 2 * 1.6449 * 0.3 / 2);  // the records narrow the prior
  // A record left out is predicted through the factor the others found.
  std::vector<bool> use(obs.size(), true);
  use[2] = false;
  const auto without = fit_joint(terms, obs, {0.5, 0.5}, use);
  EXPECT_NEAR(predict_joint(without, obs[2], 0.9).median / obs[2].published_ms, 1.0, 0.03);
}

// A floor the prior's prediction breaks (the time at most 5 ms, priced 10 ms at factor 1) pulls the
// factor down through its censored likelihood; one the prediction keeps far below barely moves it.
TEST(JointFit, AFloorIsACensoredLikelihood) {
  const std::vector<JointTerm> terms = {{"chip x", 1.0, 0.3}};
  JointObservation broken;
  broken.published_ms = 5;
  broken.floor = true;
  broken.log_sd = 0.15;
  broken.terms = {0};
  broken.price_ms = {10};
  EXPECT_LT(joint_term(fit_joint(terms, {broken}, {1}), 0, 0.9).median, 0.7);
  JointObservation loose = broken;
  loose.published_ms = 100;
  EXPECT_NEAR(joint_term(fit_joint(terms, {loose}, {1}), 0, 0.9).median, 1.0, 1e-3);
}

// No terms (no record of another chip or exporter) and no records: the prior weights stand.
TEST(JointFit, NothingToFitLeavesThePriorWeights) {
  const auto fit = fit_joint({}, {}, {0.25, 0.75});
  ASSERT_EQ(fit.weights.size(), 2u);
  EXPECT_NEAR(fit.weights[1], 0.75, 1e-12);
  EXPECT_TRUE(fit.members[0].converged);
}

TEST(JointFit, RefusesMismatchedInputs) {
  const std::vector<JointTerm> terms = {{"chip x", 1.0, 0.3}};
  JointObservation o = record(10, 1, 0);
  EXPECT_THROW(fit_joint(terms, {o}, {1.0}), layoutx::Error);  // two prices, one hypothesis
  o.terms = {3};
  EXPECT_THROW(fit_joint(terms, {o}, {0.5, 0.5}), layoutx::Error);
  EXPECT_THROW(fit_joint({{"bad", 0, 0.3}}, {}, {1.0}), layoutx::Error);
}

TEST(JointFit, MixtureQuantiles) {
  EXPECT_NEAR(normal_mixture_quantile({1}, {2}, {0.5}, 0.95), 2 + 1.6449 * 0.5, 1e-3);
  // Two equal, far-apart normals: the median lies between them, each holds half.
  const double m = normal_mixture_quantile({0.5, 0.5}, {-10, 10}, {1, 1}, 0.5);
  EXPECT_GT(m, -9);
  EXPECT_LT(m, 9);
  EXPECT_NEAR(normal_mixture_quantile({0.5, 0.5}, {-10, 10}, {1, 1}, 0.25), -10, 1e-3);
}

}  // namespace
