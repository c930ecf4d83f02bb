// How wide the predictor's 90% intervals are on a model's design space, measured graphs apart
// from the rest (cost model 3's "honest width"): what `layoutx calibrate` reports beside the
// replays. A graph is measured when a timing record's graph has its shape and variant.
#pragma once
#include <optional>
#include <vector>

#include "costmodel/measurements.h"
#include "costmodel/predictor.h"
#include "model/model_spec.h"
#include "model/variant.h"

namespace layoutx::explorer {

struct IntervalWidths {
  model::Precision precision = model::Precision::kW4A16;
  std::vector<int> contexts;
  int measured = 0, unmeasured = 0;  // graphs of each kind (distinct layer shape x variant)
  // Median half-width of the 90% interval relative to the prediction, (high - low) / 2 / latency.
  double measured_median = 0, unmeasured_median = 0;
};

// Every meaningful variant of every layer type of `model` at `precision` and each context.
IntervalWidths interval_widths(const costmodel::Predictor& predictor, const model::ModelSpec& model,
                               model::Precision precision, const std::vector<int>& contexts,
                               const std::vector<costmodel::MeasurementRecord>& records);

// The same for the model of the records' first timing, at w4a16 and contexts 1024 and 4096 (the
// shipped main job's question); nullopt when the records have no timing.
std::optional<IntervalWidths> interval_widths_of_records(const costmodel::Predictor& predictor,
                                                         const std::vector<costmodel::MeasurementRecord>& records);

}  // namespace layoutx::explorer
