// One member of a mixture of hypotheses as a predictor of its own, for pricing whole models under
// each member (explorer/public_layouts.h, explorer/public_shapes.h).
#pragma once
#include <map>
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

}  // namespace layoutx::explorer
