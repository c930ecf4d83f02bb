// Featurizing one layer graph for every member of a mixture (HypothesisPredictor) without
// repeating work: members whose structures agree on this graph share one featurization, and
// structures that differ only in relayout_cache_inputs or the VTCM terms share one op
// featurization (every structure one lowering, and one live set per threshold and re-laid set).
// A named component (in the spirit of Halide's autoscheduler Cache.h) so that it can be switched
// off: disabled, every member featurizes the graph on its own (featurize_layer), the plain
// reference the shared path must agree with (tests/costmodel/hypotheses_test.cc).
#pragma once
#include <vector>

#include "costmodel/device_spec.h"
#include "costmodel/layer_features.h"
#include "model/graph.h"

namespace layoutx::costmodel {

// The featurizations of one graph under each member's device spec.
struct MemberFeatures {
  std::vector<LayerFeatures> features;  // the distinct featurizations
  std::vector<size_t> of_member;        // member h's featurization: features[of_member[h]]
  std::vector<bool> as_written;         // features[k] lowers the graph as written (no softmax folded)
  // A lowering of the graph as written (what the converter is given) among the featurizations,
  // or null (legality then lowers the graph itself).
  const std::vector<LoweredOp>* unfused_ops() const;
};

class FeaturizationCache {
 public:
  explicit FeaturizationCache(bool enabled = true) : enabled_(enabled) {}
  bool enabled() const { return enabled_; }
  // Featurizes `graph` under each of `members` (each a member's device spec; the structure and
  // coefficients it is priced with). Exact either way: featurize_layer reads a switch only where
  // it applies, and the shared path clears the others (StructureTable::effective).
  MemberFeatures featurize(const model::LayerGraph& graph, const std::vector<const DeviceSpec*>& members) const;

 private:
  MemberFeatures shared(const model::LayerGraph& graph, const std::vector<const DeviceSpec*>& members) const;
  bool enabled_;
};

}  // namespace layoutx::costmodel
