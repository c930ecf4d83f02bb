// A whole model's parameters, counted from its built layer graphs (every Weight vertex), and a
// one-line-per-fact summary of its layer structure (what `layoutx graph --params` prints).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/graph.h"
#include "model/model_spec.h"

namespace layoutx::model {

// The embedding matrix [vocab, hidden] and the LM head as the whole-step head graph reads it,
// transposed to [hidden, vocab] (explorer/whole_step.cc builds its graphs from these).
Shape embedding_shape(const ModelSpec& m);
Shape lm_head_shape(const ModelSpec& m);

struct ParamCount {
  int64_t per_sliding_layer = 0;  // one sliding layer's weights (0 without sliding layers)
  int64_t per_full_layer = 0;     // one full layer's weights (0 without full layers)
  int64_t layers = 0;             // per layer x layers of its type, summed
  int64_t embedding = 0;          // vocab x hidden
  int64_t lm_head = 0;            // vocab x hidden, or 0 when tied to the embedding
  int64_t final_norm = 0;         // hidden
  int64_t total = 0;              // layers + embedding + lm_head + final_norm
};

// Sum of the Weight vertices' elements of one built layer graph.
int64_t graph_parameters(const LayerGraph& g);
// Builds each layer type's graph (fp16, the default layout) and counts. Throws Error if the
// model has no vocabulary size.
ParamCount count_parameters(const ModelSpec& m);

// The structure of one layer type, as built: norms per layer, activation, gate, rotary dims...
struct StructureSummary {
  std::string family;
  std::string norm;        // rms, rms_one_plus, layer
  int norms_per_layer = 0; // RmsNorm + LayerNorm ops in the graph (incl. q/k norms)
  std::string activation;  // the MLP's
  bool head_gate = false;
  bool qk_norm = false;
  bool parallel_block = false;
  bool sandwich_norms = false;
  bool qkv_fused = false;
  bool qkv_bias = false;
  double query_scale = 0;      // as built (1/sqrt(head_dim) when the config gives none)
  double attn_softcap = 0;
  int rotary_dims_sliding = -1;  // -1: no such layer type
  int rotary_dims_full = -1;
  std::string rope_scaling_full;
};
StructureSummary structure_summary(const ModelSpec& m);

}  // namespace layoutx::model
