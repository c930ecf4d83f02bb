#include "explorer/interval_widths.h"

#include <algorithm>
#include <set>
#include <string>

#include "explorer/design_space.h"
#include "explorer/measurement_plan.h"
#include "model/builder.h"
#include "model/model_loader.h"
#include "support/median.h"

namespace layoutx::explorer {

IntervalWidths interval_widths(const costmodel::Predictor& predictor, const model::ModelSpec& model,
                               model::Precision precision, const std::vector<int>& contexts,
                               const std::vector<costmodel::MeasurementRecord>& records) {
  std::set<std::string> timed;
  for (const auto& r : records)
    if (r.kind == costmodel::MeasurementRecord::Kind::kLayerTime && r.model == model.name)
      timed.insert(graph_key(costmodel::measured_layer(r), r.variant));
  IntervalWidths w;
  w.precision = precision;
  w.contexts = contexts;
  std::set<std::string> seen;
  std::vector<double> measured, unmeasured;
  std::set<model::LayerType> types(model.layer_types.begin(), model.layer_types.end());
  for (int ctx : contexts)
    for (model::LayerType t : types) {
      const model::LayerSpec layer = model.layer(t, ctx);
      for (const model::Variant& v : meaningful_variants(precision, model::AxisScope(model))) {
        const std::string key = graph_key(layer, v);
        if (!seen.insert(key).second) continue;  // a sliding layer is the same graph at every context
        const costmodel::Prediction p = predictor.predict(model::build_layer_graph(layer, v));
        if (!(p.latency_ms > 0)) continue;
        const double half = (p.high_ms - p.low_ms) / 2 / p.latency_ms;
        (timed.count(key) ? measured : unmeasured).push_back(half);
      }
    }
  w.measured = static_cast<int>(measured.size());
  w.unmeasured = static_cast<int>(unmeasured.size());
  w.measured_median = median(measured);
  w.unmeasured_median = median(unmeasured);
  return w;
}

std::optional<IntervalWidths> interval_widths_of_records(const costmodel::Predictor& predictor,
                                                         const std::vector<costmodel::MeasurementRecord>& records) {
  for (const auto& r : records)
    if (r.kind == costmodel::MeasurementRecord::Kind::kLayerTime)
      return interval_widths(predictor, model::load_model(r.model), model::Precision::kW4A16, {1024, 4096}, records);
  return std::nullopt;
}

}  // namespace layoutx::explorer
