// The whole decode step of a model: its layers (composition.h) plus the ops outside them that
// every token pays: the embedding gather (one row of the vocab x hidden table), the final
// RMSNorm and the LM head (hidden x vocab projection to the logits), each priced by the same
// cost model as the layers, as op graphs of their own (one graph each, as a one-graph-per-part
// export runs them). The LM head's precision is a parameter (default: the layers').
#pragma once
#include "costmodel/predictor.h"
#include "explorer/composition.h"
#include "model/graph.h"
#include "model/model_spec.h"

namespace layoutx::explorer {

struct WholeStep {
  model::Precision head_precision = model::Precision::kFp16;
  double layers_ms = 0;      // the composed layers (StepResult::ms)
  double embed_ms = 0;       // embedding gather graph
  double head_ms = 0;        // final norm + LM head graph
  double lm_head_ms = 0;     // the LM head projection alone (inside head_ms)
  double ms = 0;             // layers + embed + head: ms per token
  double low_ms = 0, high_ms = 0;  // bounds summed (errors taken as fully correlated, like StepResult)
  double tokens_per_s = 0;   // 1000 / ms
  double lm_head_share = 0;  // lm_head_ms / ms
};

// The embedding gather: the token's row [1, hidden] copied out of the table.
void build_embed_graph(const model::ModelSpec& m, model::Precision p, model::LayerGraph& out);
// Final RMSNorm and the LM head: hidden [1, hidden] -> logits [1, vocab].
void build_head_graph(const model::ModelSpec& m, model::Precision p, model::LayerGraph& out);

// Throws Error if the model has no vocab size.
WholeStep whole_step(const costmodel::Predictor& pr, const model::ModelSpec& m, const StepResult& layers,
                     model::Precision head_precision);

}  // namespace layoutx::explorer
