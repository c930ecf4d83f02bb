// The combined predictor of a device's hypotheses (costmodel/hypothesis_fit.h fits them): every
// hypothesis's calibrated OpLevelPredictor, mixed by weight (costmodel/mixture.h).
#pragma once
#include <Eigen/Dense>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "costmodel/featurization_cache.h"
#include "costmodel/hypothesis_fit.h"
#include "costmodel/legality.h"
#include "costmodel/mixture.h"
#include "costmodel/op_level_predictor.h"
#include "costmodel/predictor.h"

namespace layoutx::costmodel {

// The combined predictor: every hypothesis's calibrated OpLevelPredictor, mixed by weight. The
// interval is the mixture's (within-hypothesis uncertainty + the spread between hypotheses);
// the difference of two predictions likewise (so hypotheses that disagree on the sign of a
// difference widen it). Prediction::design_row is the hypotheses' rows concatenated.
class HypothesisPredictor : public Predictor {
 public:
  HypothesisPredictor(std::vector<std::string> names, std::vector<double> weights,
                      std::vector<std::unique_ptr<OpLevelPredictor>> members);
  Prediction predict(const model::LayerGraph& graph) const override;
  std::vector<HypothesisFigure> predict_each(const model::LayerGraph& graph) const override;
  std::unique_ptr<Predictor> reweighted(const std::vector<double>& weights) const override;
  size_t hypothesis_count() const override { return members_.size(); }
  std::string device() const override { return members_.front()->device(); }
  std::string calibration_id() const override { return id_; }
  double difference_half_width_ms(const Prediction& a, const Prediction& b) const override;
  // The mixture's own probability (sum of w_h P_h(a faster)), not a normal with its spread.
  double probability_faster(const Prediction& a, const Prediction& b) const override;
  // The mixture as one linear belief over the concatenated coefficients: member h's block is
  // w_h theta_h with covariance w_h^2 cov_h (so row . mean / 1e3 is the combined latency), and
  // the weighted model error. It leaves out the spread between the hypotheses' means, which
  // difference_half_width_ms carries; with one hypothesis holding nearly all the weight (as the
  // shipped data gives) the two agree.
  std::optional<CoefficientBelief> belief() const override;
  // The mixture itself: member h's calibrated belief over its slice of the concatenated row
  // (mean theta_h, covariance cov_h, its model error), with weight w_h. What `next` values a
  // measurement under: a timing also moves the weights, so the spread between hypotheses counts.
  std::vector<BeliefComponent> belief_components() const override;
  // Each member's class rows in its slice of the concatenated row (a class one member lacks,
  // e.g. a folded softmax's, is zero in that member's slice).
  std::vector<std::pair<std::string, std::vector<double>>> class_rows(const model::LayerGraph& graph) const override;
  // Latency from a cached (concatenated) design row: the weighted sum of the members' dot products.
  double latency_from_row(const std::vector<double>& row) const;
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<double>& weights() const { return weights_; }
  const OpLevelPredictor& member(size_t h) const { return *members_[h]; }
  size_t size() const { return members_.size(); }
  // Featurizations shared between members (on by default); off: each member featurizes alone.
  void share_featurizations(bool on) { cache_ = FeaturizationCache(on); }

 private:
  // Each member's price of `graph`, each distinct (calibration, featurization) once: `each` and
  // its `weights` (the members it stands for summed), `priced[h]` member h's entry in each.
  struct Priced {
    std::vector<Prediction> each;
    std::vector<double> weights;
    std::vector<size_t> priced, each_group;  // member -> index into each; each -> its featurization
    std::vector<std::vector<double>> op_ms;  // each -> its ops' costs (each[0]: in its ops)
  };
  Priced price_members(const MemberFeatures& mf) const;
  // each[j] priced from featurization features[group[j]]: each[0] with its ops, the rest with
  // their ops' costs in op_ms[j] (OpLevelPredictor::price).
  Prediction combine(std::vector<Prediction>& each, const std::vector<std::vector<double>>& op_ms,
                     const std::vector<double>& weights, const std::vector<size_t>& group,
                     const std::vector<LayerFeatures>& features) const;
  // Each member's mean and sd of latency(a) - latency(b) (ms); false when a row is not this
  // predictor's (then the defaults apply).
  bool member_differences(const Prediction& a, const Prediction& b, std::vector<double>& mu,
                          std::vector<double>& sd) const;
  std::vector<std::string> names_;
  std::vector<double> weights_;
  std::vector<std::unique_ptr<OpLevelPredictor>> members_;
  std::vector<const DeviceSpec*> specs_;  // member h's device spec (what it is featurized under)
  FeaturizationCache cache_;
  std::vector<size_t> offset_;  // where member h's row starts in the concatenated row
  Eigen::VectorXd weighted_theta_;  // w_h theta_h / 1e3, concatenated: latency = row . this
  // twin_[h]: the first member with the same fitted calibration as h (h itself if none): members
  // of one such class whose featurizations of a graph agree are priced once.
  std::vector<size_t> twin_;
  // layout_[h]: the first member whose spec lays its coefficients out as h's does: members of one
  // layout share a featurization's LayerRows (costmodel/op_level_predictor.h).
  std::vector<size_t> layout_;
  std::string id_;
};

// The combined predictor of a fitted set, keeping the hypotheses that hold `mass` of the weight
// (1: every hypothesis).
std::unique_ptr<HypothesisPredictor> make_predictor(const HypothesisSet& set, const DeviceSpec& device,
                                                    double mass = kPredictorWeightMass);
// The same with legality rules of the caller's (e.g. a loop that adds compile outcomes).
std::unique_ptr<HypothesisPredictor> make_predictor(const HypothesisSet& set, const RuleSet& rules,
                                                    double mass = kPredictorWeightMass);

}  // namespace layoutx::costmodel
