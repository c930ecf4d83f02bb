// Where search and cost meet (Timeloop's ask/tell): the search asks for a point, the evaluator
// builds its graph once per distinct shape, asks the Predictor and (optionally) a fidelity
// oracle, and says whether the point could be built at all.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "costmodel/predictor.h"
#include "model/model_spec.h"
#include "model/variant.h"

namespace layoutx::explorer {

// Fidelity of a variant: SNR (dB) of the layer output against the float64 reference.
class FidelityOracle {
 public:
  virtual ~FidelityOracle() = default;
  virtual std::optional<double> snr_db(const model::LayerSpec& layer, const model::Variant& v) = 0;
  virtual std::string describe() const = 0;  // how the figure is obtained (for reports)
};

enum class EvalStatus {
  kOk,
  kCannotBuild,  // the point is not in the space (e.g. a graph that cannot be formed)
  kFailed,       // the evaluation itself failed (predictor error)
};

struct Evaluation {
  EvalStatus status = EvalStatus::kOk;
  std::string error;  // why, when not kOk
  model::Variant variant;
  costmodel::Prediction prediction;
  std::optional<double> snr_db;  // set once Evaluator::fidelity() was asked
  bool fidelity_asked = false;
};

class Evaluator {
 public:
  explicit Evaluator(const costmodel::Predictor& predictor, FidelityOracle* fidelity = nullptr)
      : predictor_(predictor), fidelity_(fidelity) {}

  // Cached by (layer shape, variant): a sliding layer is evaluated once for every context.
  const Evaluation& evaluate(const model::LayerSpec& layer, const model::Variant& v);

  // The variant's fidelity (SNR, dB), asked of the oracle only when first needed and memoized
  // in the evaluation (fidelity is costly: the search asks it lazily). Empty without an oracle.
  std::optional<double> fidelity(const model::LayerSpec& layer, const model::Variant& v);

  const costmodel::Predictor& predictor() const { return predictor_; }
  FidelityOracle* fidelity() const { return fidelity_; }
  size_t cache_size() const { return cache_.size(); }
  size_t graphs_built() const { return graphs_built_; }

  // The key that identifies a layer's graph shape: every LayerSpec field but context (a layer's
  // context reaches its graph through cache_entries; model::built_layer applies a variant's).
  static std::string shape_key(const model::LayerSpec& layer);
  // The key of the graph `v` builds of `layer`: shape_key of model::built_layer and the variant's
  // key (a sliding layer with sliding_cache=context is a different graph at each context).
  static std::string graph_key(const model::LayerSpec& layer, const model::Variant& v);

 private:
  const costmodel::Predictor& predictor_;
  FidelityOracle* fidelity_;
  // Hashed: the keys are long and share their prefixes. Node-based, so the references
  // evaluate() hands out stay valid as the cache grows.
  std::unordered_map<std::string, Evaluation> cache_;
  size_t graphs_built_ = 0;
};

}  // namespace layoutx::explorer
