// Features of lowered HTP ops: plain data, separate from the coefficients that price them
// (style.md: Halide's Featurization.h). A feature vector says what an op does; the device's
// calibrated coefficients (costmodel/cost_model.h) say what that costs.
#pragma once
#include <cstdint>
#include <vector>

#include "costmodel/device_spec.h"
#include "costmodel/lowering.h"
#include "costmodel/op_class.h"
#include "model/graph.h"
#include "model/variant.h"

namespace layoutx::costmodel {

// Bump when a field is added or its meaning changes; saved calibrations record the version
// they were fitted with and are refused by another.
inline constexpr int kFeatureVersion = 2;

struct OpFeatures {
  OpClass op_class = OpClass::kElementwise;            // which coefficients price the op
  model::Precision precision = model::Precision::kFp16;  // the graph's precision (weights / activations)
  double count = 0;  // dispatches: 1 per lowered op
  // Bytes read + written (operands and output; scalar Constants folded, not counted).
  // 16-bit activation tensors (f16, u16) are counted in the HTP's tiled layout: the last
  // (channel) axis rounded up to `channel_pad` (a [kv,G,1] score occupies [kv,G,32]).
  // Weight tensors are counted packed (4-bit: half a byte per element), unpadded.
  double bytes = 0;
  // Multiply-accumulates (MatMul only): padded output elements x contraction length. A weight
  // projection's M (1 row in decode) is padded to the matrix unit's tile height
  // (Structure::hmx_tile_rows): the HMX computes whole tiles.
  double macs = 0;
};

// Bytes of a tensor as the HTP holds it: 16-bit activations padded on the last axis to
// `channel_pad`, anything else packed (model::tensor_bytes).
int64_t tiled_bytes(const model::Shape& shape, model::DType dtype, int channel_pad, bool is_weight);

// Bytes a weight tensor streams under the structure `s`: packed (4-bit: half a byte per element,
// plus a block-quantized weight's 4-bit block scales), or its 8-bit bytes when `s` expands it
// (Structure::w4_expanded; `conv`: the op reading it is a 1x1 Conv). Unpadded.
int64_t weight_bytes(const model::OpNode& w, const Structure& s, bool conv);

// Features of one lowered op of graph `g` under the structure `s` (tile height; 4-bit weights
// packed or expanded to 8 bits before the matrix unit).
OpFeatures features(const model::LayerGraph& g, const LoweredOp& op, int channel_pad, const Structure& s = {});
// Features of every lowered op, in the same order.
std::vector<OpFeatures> features(const model::LayerGraph& g, const std::vector<LoweredOp>& ops, int channel_pad,
                                 const Structure& s = {});

}  // namespace layoutx::costmodel
