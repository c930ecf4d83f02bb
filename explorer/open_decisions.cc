#include "explorer/open_decisions.h"

#include <utility>

#include "explorer/context_answer.h"

namespace layoutx::explorer {

std::vector<Decision> open_decisions(Evaluator& ev, const model::ModelSpec& m, const std::vector<int>& ctxs,
                                     model::Precision p, const SelectionPolicy& policy) {
  std::vector<Decision> decisions;
  for (int ctx : ctxs) {
    ContextAnswer a = answer_context(ev, m, ctx, p, same_policy(policy));
    for (auto& c : a.choices) decisions.push_back({ctx, m.count(c.layer), m.layer(c.layer, ctx), std::move(c)});
  }
  return decisions;
}

std::optional<std::string> timed_graph_key(const costmodel::MeasurementRecord& r, const model::ModelSpec& m) {
  if (r.kind == costmodel::MeasurementRecord::Kind::kLayerTime && r.model == m.name && m.count(r.layer) > 0 &&
      (r.layer == model::LayerType::kFull || !m.sliding_window || r.context >= *m.sliding_window))
    return graph_key(m.layer(r.layer, r.context), r.variant);
  return std::nullopt;
}

std::set<std::string> timed_graph_keys(const std::vector<costmodel::MeasurementRecord>& records,
                                       const model::ModelSpec& m) {
  std::set<std::string> keys;
  for (const auto& r : records)
    if (auto k = timed_graph_key(r, m)) keys.insert(std::move(*k));
  return keys;
}

}  // namespace layoutx::explorer
