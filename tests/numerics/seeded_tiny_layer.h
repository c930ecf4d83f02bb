// The small layer (tiny_layer.h) with seeded weights, a seeded token history and the float64
// reference's outputs for it: what the parity tests compare each variant's run against.
#pragma once
#include <cstdint>

#include "model/builder.h"
#include "model/numerics/fidelity.h"
#include "model/numerics/reference.h"
#include "tiny_layer.h"

namespace layoutx::model::numerics {

inline constexpr uint64_t kTinySeed = 11;

struct SeededTinyLayer {
  LayerSpec layer;
  LayerWeights w;
  Sequence in, ref;
  SeededTinyLayer(LayerType t, int steps) : layer(tiny_layer(t)) {
    w = seeded_weights(layer, kTinySeed);
    in = token_inputs(layer.hidden, steps, kTinySeed);
    ref = run_reference(layer, w, in);
  }
  Sequence run(const Variant& v, Arithmetic a = Arithmetic::kFloat32, bool sim = false, const QuantOptions& q = {}) const {
    return run_variant(layer, v, w, in, a, sim, q);
  }
  Sequence run_graph(const LayerGraph& g) const { return simulate<float>(g, w, in); }
  // The variant's outputs against the reference.
  Fidelity fid(const Variant& v, Arithmetic a, bool sim, const QuantOptions& q = {}) const {
    return compare(ref, run(v, a, sim, q), in);
  }
};

}  // namespace layoutx::model::numerics
