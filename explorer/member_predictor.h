// One member of a mixture of hypotheses as a predictor of its own, for pricing whole models under
// each member (explorer/public_layouts.h, explorer/public_shapes.h).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "costmodel/predictor.h"
#include "model/graph.h"

namespace layoutx::explorer {

// One member of a mixture as a predictor of its own. The mixture prices every member at once
// (predict_each), so the figures of a graph are kept for the other members (the graph's ops and
// shapes are its key: embedding and head graphs have no variant of their own).
class MemberPredictor : public costmodel::Predictor {
 public:
  using Figures = std::map<std::string, std::vector<costmodel::HypothesisFigure>>;
  MemberPredictor(const costmodel::Predictor& mixture, size_t member, Figures& figures)
      : mixture_(mixture), member_(member), figures_(figures) {}
  costmodel::Prediction predict(const model::LayerGraph& g) const override {
    std::string key;
    for (model::Vertex v = 0; v < g.size(); ++v) {
      const auto& n = g.op(v);
      key += n.name + ':' + model::to_string(n.kind) + model::to_string(n.shape) + model::to_string(n.dtype) + ';';
    }
    auto it = figures_.find(key);
    if (it == figures_.end()) it = figures_.emplace(key, mixture_.predict_each(g)).first;
    return it->second.at(member_).prediction;
  }
  std::string device() const override { return mixture_.device(); }
  std::string calibration_id() const override { return mixture_.calibration_id(); }

 private:
  const costmodel::Predictor& mixture_;
  size_t member_;
  Figures& figures_;
};

// Every member of a mixture as a predictor of its own, all sharing one figures cache (one
// calibration: the calibration itself, with all the weight). A member's name and its weight from
// the team's timings come with the first graph any member priced ("" and 0 before one was).
class MixtureMembers {
 public:
  explicit MixtureMembers(const costmodel::Predictor& mixture) : mixture_(mixture) {
    for (size_t i = 0; i < mixture.hypothesis_count(); ++i)
      members_.push_back(std::make_unique<MemberPredictor>(mixture, i, figures_));
  }
  MixtureMembers(const MixtureMembers&) = delete;  // the members refer to figures_
  MixtureMembers& operator=(const MixtureMembers&) = delete;
  size_t size() const { return members_.empty() ? 1 : members_.size(); }
  const costmodel::Predictor& operator[](size_t i) const { return members_.empty() ? mixture_ : *members_.at(i); }
  std::string name(size_t i) const {
    if (members_.empty()) return mixture_.calibration_id();
    return figures_.empty() ? std::string() : figures_.begin()->second.at(i).name;
  }
  double weight(size_t i) const {
    if (members_.empty()) return 1.0;
    return figures_.empty() ? 0.0 : figures_.begin()->second.at(i).weight;
  }

 private:
  const costmodel::Predictor& mixture_;
  MemberPredictor::Figures figures_;
  std::vector<std::unique_ptr<MemberPredictor>> members_;
};

}  // namespace layoutx::explorer
