#include "db/device_predictions.h"

#include <algorithm>

#include "costmodel/device_spec.h"
#include "model/builder.h"
#include "model/design_space.h"
#include "model/model_loader.h"
#include "support/error.h"

namespace layoutx::db {

costmodel::Predictor* DevicePredictions::load(const std::string& device) {
  auto it = predictors_.find(device);
  if (it != predictors_.end()) return it->second.get();
  LoadedDevicePredictor p;
  try {
    p = loader_(device);
  } catch (const Error& e) {
    if (loader_errors_are_fatal_) throw;
    p.source = std::string("no predictor: ") + e.what();
    // A device with a spec but no calibration (onnxruntime-cpu before its first calibrate) is
    // compared with its history only; a name with no spec cannot be predicted at all (a typo,
    // or a spec that is not here): its rows are errors, not "ok".
    const auto known = costmodel::known_devices();
    if (std::find(known.begin(), known.end(), device) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      unknown_[device] = "no device spec for '" + device + "' (known: " + list + "): add configs/devices/" + device +
                         ".yaml (or under $LAYOUTX_CONFIGS) to predict its timings, or give --device NAME to check the others";
    }
  }
  sources_[device] = {p.predictor ? p.predictor->calibration_id() : "", p.source};
  return predictors_.emplace(device, std::move(p.predictor)).first->second.get();
}

bool DevicePredictions::predicts(const MeasurementKey& k) {
  auto it = boundaries_.find(k.device);
  if (it == boundaries_.end()) {
    std::optional<std::vector<std::string>> b;
    const auto known = costmodel::known_devices();
    if (std::find(known.begin(), known.end(), k.device) != known.end()) b = costmodel::load_device_named(k.device).boundaries;
    it = boundaries_.emplace(k.device, std::move(b)).first;
  }
  if (!it->second) return true;
  return std::find(it->second->begin(), it->second->end(), k.boundary) != it->second->end();
}

std::optional<PredictedLatency> DevicePredictions::operator()(const MeasurementKey& k) {
  costmodel::Predictor* predictor = load(k.device);
  if (!predictor) {
    auto u = unknown_.find(k.device);
    if (u != unknown_.end()) throw Error(u->second);
    return std::nullopt;
  }
  auto m = models_.find(k.model);
  if (m == models_.end()) m = models_.emplace(k.model, model::load_model(k.model)).first;
  model::LayerSpec layer = m->second.layer(model::parse_layer_type(k.layer_type), k.ctx);
  model::LayerGraph g = model::build_layer_graph(layer, model::parse_variant(k.variant_key, {}, model::AxisScope(m->second)));
  costmodel::Prediction p = predictor->predict(g);
  return PredictedLatency{p.latency_ms, p.low_ms, p.high_ms, p.calibration_id};
}

}  // namespace layoutx::db
