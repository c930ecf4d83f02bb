// What `next` plans measurements for: the open decisions (select's choice per context and layer
// type) and the graphs the calibration data has timed already.
#pragma once
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "costmodel/measurements.h"
#include "explorer/evaluator.h"
#include "explorer/measurement_plan.h"
#include "explorer/selection.h"
#include "model/model_spec.h"

namespace layoutx::explorer {

// Per context in `ctxs` (in order), per layer type the model has: select's choice under `policy`
// (explorer::answer_context with the same policy for every type) as a Decision.
std::vector<Decision> open_decisions(Evaluator& ev, const model::ModelSpec& m, const std::vector<int>& ctxs,
                                     model::Precision p, const SelectionPolicy& policy);

// graph_key of every layer timing of model `m` among `records` (a device's measurement file, a
// database's timings): PlanOptions::already_timed. Timings of a layer the model cannot build are
// passed over.
std::set<std::string> timed_graph_keys(const std::vector<costmodel::MeasurementRecord>& records,
                                       const model::ModelSpec& m);
// The graph_key of one record if it is a layer timing of model `m` that `m` can build; nullopt if not.
std::optional<std::string> timed_graph_key(const costmodel::MeasurementRecord& r, const model::ModelSpec& m);

}  // namespace layoutx::explorer
