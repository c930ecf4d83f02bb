// How many tensor elements a layer takes when it is materialised (weights plus K/V cache), and
// the check the verbs that materialise one (parity, emit, measure) make before allocating.
#pragma once
#include <cstdint>
#include <string>

#include "model/model_spec.h"

namespace layoutx::model {

// Elements of the layer's weights (QKV, output, optional head gate, gated MLP) and its K/V cache.
int64_t layer_tensor_elements(const LayerSpec& layer);

// Throws Error naming `who` when the layer exceeds limits::kMaxTensorElements.
void check_tensor_budget(const LayerSpec& layer, const std::string& who);

}  // namespace layoutx::model
