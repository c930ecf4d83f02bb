#include "explorer/whole_step.h"

#include <boost/graph/adjacency_list.hpp>

#include "model/param_count.h"
#include "support/error.h"

namespace layoutx::explorer {

namespace {

using model::DType;
using model::OpKind;
using model::OpNode;
using model::Vertex;

Vertex add(model::LayerGraph& g, OpNode n, std::initializer_list<Vertex> operands) {
  Vertex v = boost::add_vertex(g.graph);
  g.graph[v] = std::move(n);
  int i = 0;
  for (Vertex u : operands) boost::add_edge(u, v, model::Operand{i++}, g.graph);
  return v;
}

DType activation(model::Precision p) { return model::is_quantized(p) ? DType::kU16 : DType::kF16; }
DType weight_dtype(model::Precision p) {
  switch (model::weight_bits(p)) {
    case 16: return DType::kF16;
    case 8: return DType::kI8;
    default: return DType::kI4;
  }
}

void start(const model::ModelSpec& m, model::Precision p, model::LayerGraph& g) {
  if (m.vocab <= 0) throw Error(m.source + ": vocab: the whole step needs the vocabulary size");
  g.layer = model::LayerSpec{};
  g.layer.hidden = m.hidden;
  g.layer.rms_eps = m.rms_eps;
  g.variant = model::Variant{};
  g.variant.set(p);
}

// A boundary input (f16 from the runtime; quantized graphs convert it) and output, as the layer
// builder writes them.
Vertex input(model::LayerGraph& g, const std::string& name, model::Shape s) {
  Vertex v = add(g, {.name = "in/" + name, .kind = OpKind::kInput, .shape = s, .dtype = DType::kF16}, {});
  if (!model::is_quantized(g.variant.precision())) return v;
  return add(g, {.name = "in/" + name + "/quantize", .kind = OpKind::kConvert, .shape = s, .dtype = DType::kU16}, {v});
}
void output(model::LayerGraph& g, const std::string& name, Vertex x) {
  const model::Shape s = g.op(x).shape;
  if (model::is_quantized(g.variant.precision()))
    x = add(g, {.name = "out/" + name + "/dequantize", .kind = OpKind::kConvert, .shape = s, .dtype = DType::kF16}, {x});
  add(g, {.name = "out/" + name, .kind = OpKind::kOutput, .shape = s, .dtype = DType::kF16}, {x});
}

}  // namespace

void build_embed_graph(const model::ModelSpec& m, model::Precision p, model::LayerGraph& g) {
  start(m, p, g);
  const int64_t h = m.hidden;
  Vertex row = input(g, "embedding_row", {1, h});
  Vertex copy = add(g, {.name = "embed/gather", .kind = OpKind::kSlice, .shape = {1, h}, .dtype = activation(p),
                        .axis = -1, .start = 0, .end = h},
                    {row});
  if (m.embedding_scale != 1.0) {  // Gemma: the embedded token times sqrt(hidden)
    Vertex c = add(g, {.name = "embed/scale_c", .kind = OpKind::kConstant, .shape = {1}, .dtype = activation(p),
                       .scalar = m.embedding_scale},
                   {});
    copy = add(g, {.name = "embed/scale", .kind = OpKind::kMul, .shape = {1, h}, .dtype = activation(p)}, {copy, c});
  }
  output(g, "hidden", copy);
}

void build_head_graph(const model::ModelSpec& m, model::Precision p, model::LayerGraph& g) {
  start(m, p, g);
  const int64_t h = m.hidden, v = m.vocab;
  Vertex x = input(g, "hidden_in", {1, h});
  Vertex norm_w = add(g, {.name = "w/final_norm", .kind = OpKind::kWeight, .shape = {h}, .dtype = activation(p)}, {});
  // The family's final norm: Cohere's LayerNorm, Gemma's (1 + w) RMSNorm, else RMSNorm.
  const model::NormKind nk = m.structure.norm;
  Vertex norm = add(g, {.name = "head/final_norm", .kind = nk == model::NormKind::kLayer ? OpKind::kLayerNorm : OpKind::kRmsNorm,
                        .shape = {1, h}, .dtype = activation(p), .axis = -1, .eps = m.rms_eps,
                        .norm_offset = nk == model::NormKind::kRmsOnePlus ? 1.0 : 0.0},
                    {x, norm_w});
  // The LM head the parameter count counts (model/param_count.h): read at every step, tied or not.
  Vertex w = add(g, {.name = "w/lm_head", .kind = OpKind::kWeight, .shape = model::lm_head_shape(m), .dtype = weight_dtype(p)}, {});
  Vertex logits = add(g, {.name = "head/lm_head", .kind = OpKind::kMatMul, .shape = {1, v}, .dtype = activation(p)}, {norm, w});
  auto scalar = [&](const std::string& name, double c) {
    return add(g, {.name = name, .kind = OpKind::kConstant, .shape = {1}, .dtype = activation(p), .scalar = c}, {});
  };
  auto mul = [&](const std::string& name, Vertex a, Vertex b) {
    return add(g, {.name = name, .kind = OpKind::kMul, .shape = {1, v}, .dtype = activation(p)}, {a, b});
  };
  if (m.logit_scale != 1.0) logits = mul("head/logit_scale", logits, scalar("head/logit_scale_c", m.logit_scale));  // Cohere
  if (m.final_softcap > 0) {  // Gemma 2: tanh(logits / c) * c
    Vertex t = add(g, {.name = "head/softcap_tanh", .kind = OpKind::kTanh, .shape = {1, v}, .dtype = activation(p)},
                   {mul("head/softcap_div", logits, scalar("head/softcap_inv", 1.0 / m.final_softcap))});
    logits = mul("head/softcap", t, scalar("head/softcap_c", m.final_softcap));
  }
  output(g, "logits", logits);
}

WholeStep whole_step(const costmodel::Predictor& pr, const model::ModelSpec& m, const StepResult& layers,
                     model::Precision head_precision) {
  WholeStep s;
  s.head_precision = head_precision;
  s.layers_ms = layers.ms;
  model::LayerGraph embed, head;
  build_embed_graph(m, head_precision, embed);
  build_head_graph(m, head_precision, head);
  const costmodel::Prediction pe = pr.predict(embed), ph = pr.predict(head);
  s.embed_ms = pe.latency_ms;
  s.head_ms = ph.latency_ms;
  for (const costmodel::OpCost& c : ph.ops)
    if (c.name == "head/lm_head") s.lm_head_ms += c.ms;
  s.ms = layers.ms + s.embed_ms + s.head_ms;
  s.low_ms = layers.low_ms + pe.low_ms + ph.low_ms;
  s.high_ms = layers.high_ms + pe.high_ms + ph.high_ms;
  s.tokens_per_s = s.ms > 0 ? 1e3 / s.ms : 0;
  s.lm_head_share = s.ms > 0 ? s.lm_head_ms / s.ms : 0;
  return s;
}

}  // namespace layoutx::explorer
