#include "explorer/open_decisions.h"

#include <utility>

#include "costmodel/measurements.h"
#include "explorer/context_answer.h"
#include "support/error.h"

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
  if (r.kind != costmodel::MeasurementRecord::Kind::kLayerTime || r.model != m.name) return std::nullopt;
  // The key of the graph the record was timed on: its model as the record names it (the shipped
  // spec of that name), not `m`. A spec that keeps a shipped model's name with another shape
  // builds other graphs, whose keys (shape included) then differ.
  try {
    return graph_key(costmodel::measured_layer(r), r.variant);
  } catch (const Error&) {
    return std::nullopt;  // the record's model or layer does not build: it timed no graph of ours
  }
}

std::set<std::string> timed_graph_keys(const std::vector<costmodel::MeasurementRecord>& records,
                                       const model::ModelSpec& m) {
  std::set<std::string> keys;
  for (const auto& r : records)
    if (auto k = timed_graph_key(r, m)) keys.insert(std::move(*k));
  return keys;
}

}  // namespace layoutx::explorer
