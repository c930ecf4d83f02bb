#include "explorer/evaluator.h"
#include "model/design_space.h"

#include "model/builder.h"
#include "model/layer_fields.h"
#include "support/error.h"

namespace layoutx::explorer {

// The graph depends on the context only through cache_entries (model::built_layer sets it for a
// full-length sliding cache), so a sliding layer's evaluation is shared by every context.
std::string Evaluator::shape_key(const model::LayerSpec& l) { return model::layer_key(l, {"context"}); }

std::string Evaluator::graph_key(const model::LayerSpec& layer, const model::Variant& v) {
  return shape_key(model::built_layer(layer, v)) + '|' + v.key();
}

const Evaluation& Evaluator::evaluate(const model::LayerSpec& layer, const model::Variant& v) {
  std::string key = graph_key(layer, v);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  Evaluation e;
  e.variant = v;
  try {
    const model::LayerGraph g = model::build_layer_graph(layer, v);  // built in place, never copied
    ++graphs_built_;
    try {
      e.prediction = predictor_.predict(g);
    } catch (const Error& err) {
      e.status = EvalStatus::kFailed;
      e.error = err.what();
    }
  } catch (const Error& err) {
    e.status = EvalStatus::kCannotBuild;
    e.error = err.what();
  }
  return cache_.emplace(key, std::move(e)).first->second;
}

}  // namespace layoutx::explorer

namespace layoutx::explorer {

std::optional<double> Evaluator::fidelity(const model::LayerSpec& layer, const model::Variant& v) {
  evaluate(layer, v);
  Evaluation& e = cache_.at(graph_key(layer, v));
  if (!e.fidelity_asked && fidelity_ && e.status == EvalStatus::kOk) {
    e.fidelity_asked = true;
    // Forms that compute the same function (k_layout, sliding_cache) share one figure: the
    // oracle is asked of the variant with those axes at their defaults.
    e.snr_db = fidelity_->snr_db(layer, model::design_space().numerics_representative(v));
  }
  return e.snr_db;
}

}  // namespace layoutx::explorer
