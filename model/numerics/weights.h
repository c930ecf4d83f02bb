// The parameters of one layer, by role, in the layouts of model/graph.h's Role comments
// (projections transposed to [in, out]; norms [hidden]). Held in float64; an executor
// converts (and, for quantized precisions, quantizes) them once.
#pragma once
#include <cstdint>
#include <map>

#include "model/graph.h"
#include "model/model_spec.h"
#include "model/numerics/tensor.h"

namespace layoutx::model::numerics {

using LayerWeights = std::map<Role, Tensor<double>>;

// The weight roles a layer has and their shapes (g_proj only with a head gate).
std::map<Role, Shape> weight_shapes(const LayerSpec& layer);

// True for the projection weights (the ones quantized to 8/4 bits in w8a16/w4a16).
bool is_projection(Role r);
bool is_norm(Role r);  // a norm's weight [hidden] or [head_dim]
bool is_bias(Role r);  // a projection's bias

// Deterministic weights of realistic scale and shape. Projections: Student's t with nu = 5
// degrees of freedom, scaled to standard deviation s = max(0.02, 0.9 / sqrt(fan_in)) (the RMS a
// Gaussian N(0, s^2) had: 0.02 is these models' initializer and what a 2048-wide layer gets,
// 0.02 sqrt(2048) = 0.9 per output unit; a narrow test layer gets the larger s that keeps its
// activations at that same scale). Why heavy-tailed: trained LLM weights are centrally peaked
// with heavy tails, not Gaussian; Dotzel et al. 2024 ("Learning from Students: Applying
// t-Distributions to Explore Accurate and Efficient Formats for LLMs", ICML) profiled the
// tensors of 30 models and fit Student's t with nu about 5, which is the figure taken here.
// The tails are what makes a per-channel max-abs scale coarse (a column's largest weight sets
// the step of all its others) and a block scale finer. Not modelled: outlier *channels* (whole
// input rows or output columns larger than the rest), which real checkpoints also have; use
// --weights for a real one. Norm weights 1 + N(0, 0.05^2) (Gemma's stored w - 1: N(0, 0.05^2)); biases N(0, 0.1^2). Each role draws from its own stream
// seeded by (seed, role), so one tensor does not depend on the others' sizes.
LayerWeights seeded_weights(const LayerSpec& layer, uint64_t seed);

// Throws Error naming every role that is missing or has the wrong shape.
void check_weights(const LayerSpec& layer, const LayerWeights& w, const std::string& what);

}  // namespace layoutx::model::numerics
