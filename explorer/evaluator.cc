#include "explorer/evaluator.h"

#include <cstdio>

#include "model/builder.h"
#include "support/error.h"

namespace layoutx::explorer {

namespace {
// What a family's layer adds to the shape (empty for Spark2_5's structure and unscaled RoPE, so
// Spark's keys are as they were).
std::string family_suffix(const model::LayerSpec& l) {
  const model::LayerStructure& s = l.structure;
  std::string k;
  if (!(s == model::LayerStructure{})) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "S%s/%d%d%d%d%d/%.17g/%.17g/", model::to_string(s.norm), int(s.sandwich_norms),
                  int(s.qk_norm), int(s.parallel_block), int(s.qkv_fused), int(s.qkv_bias), s.query_scale,
                  s.attn_softcap);
    k += buf;
  }
  if (l.rope.scaling != model::RopeScaling::kNone) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "R%s/%.17g/%.17g/%.17g/%d/", model::to_string(l.rope.scaling), l.rope.factor,
                  l.rope.low_freq_factor, l.rope.high_freq_factor, l.rope.original_context);
    k += buf;
  }
  return k;
}
}  // namespace

std::string Evaluator::shape_key(const model::LayerSpec& l) {
  auto n = [](auto x) { return std::to_string(x) + '/'; };
  auto real = [](double x) {  // exact, so two different values never share a key
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g/", x);
    return std::string(buf);
  };
  return std::string(model::to_string(l.type)) + '/' + n(l.cache_entries) + n(l.hidden) + n(l.intermediate) +
         n(l.heads) + n(l.kv_heads) + n(l.head_dim) + n(l.rope.rotary_dims) + real(l.rope.theta) +
         model::to_string(l.activation) + '/' + n(int(l.head_gate)) + real(l.rms_eps) + family_suffix(l);
}

const Evaluation& Evaluator::evaluate(const model::LayerSpec& layer, const model::Variant& v) {
  std::string key = shape_key(layer) + '|' + v.key();
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
  Evaluation& e = cache_.at(shape_key(layer) + '|' + v.key());
  if (!e.fidelity_asked && fidelity_ && e.status == EvalStatus::kOk) {
    e.fidelity_asked = true;
    e.snr_db = fidelity_->snr_db(layer, v);
  }
  return e.snr_db;
}

}  // namespace layoutx::explorer
