#include "explorer/evaluator.h"
#include "model/design_space.h"

#include <charconv>
#include <cstdint>

#include "model/builder.h"
#include "support/error.h"

namespace layoutx::explorer {

namespace {
// Appends x and '/': integers in decimal, reals in their shortest form that reads back exactly
// (so two different values never share a key). std::to_chars: no locale, no allocation.
template <typename T>
void put(std::string& k, T x) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  k.append(buf, r.ptr);
  k += '/';
}

void put(std::string& k, const char* text) {
  k += text;
  k += '/';
}

// What a family's layer adds to the shape (nothing for Spark2_5's structure and unscaled RoPE).
void put_family(std::string& k, const model::LayerSpec& l) {
  const model::LayerStructure& s = l.structure;
  if (!(s == model::LayerStructure{})) {
    k += 'S';
    put(k, model::to_string(s.norm));
    for (bool b : {s.sandwich_norms, s.qk_norm, s.parallel_block, s.qkv_fused, s.qkv_bias}) k += b ? '1' : '0';
    k += '/';
    put(k, s.query_scale);
    put(k, s.attn_softcap);
  }
  if (l.rope.scaling != model::RopeScaling::kNone) {
    k += 'R';
    put(k, model::to_string(l.rope.scaling));
    put(k, l.rope.factor);
    put(k, l.rope.low_freq_factor);
    put(k, l.rope.high_freq_factor);
    put(k, l.rope.original_context);
  }
}
}  // namespace

// A field added to these structs must be added to the key (else two different graphs share a
// cached evaluation, silently): the sizes below fail the build until the key is looked at.
static_assert(sizeof(model::LayerSpec) == 136, "LayerSpec changed: add the new field to Evaluator::shape_key");
static_assert(sizeof(model::RopeSpec) == 48, "RopeSpec changed: add the new field to Evaluator::shape_key");
static_assert(sizeof(model::LayerStructure) == 32, "LayerStructure changed: add the new field to put_family");

std::string Evaluator::shape_key(const model::LayerSpec& l) {
  std::string k;
  k.reserve(128);
  put(k, model::to_string(l.type));
  for (int64_t x : {int64_t(l.window), int64_t(l.cache_entries), int64_t(l.hidden), int64_t(l.intermediate), int64_t(l.heads),
                    int64_t(l.kv_heads), int64_t(l.head_dim), int64_t(l.rope.rotary_dims)})
    put(k, x);
  put(k, l.rope.theta);
  put(k, model::to_string(l.activation));
  put(k, int(l.head_gate));
  put(k, l.rms_eps);
  put_family(k, l);
  return k;
}

std::string Evaluator::graph_key(const model::LayerSpec& layer, const model::Variant& v) {
  return shape_key(model::built_layer(layer, v)) + '|' + v.key();
}

const Evaluation& Evaluator::evaluate(const model::LayerSpec& layer, const model::Variant& v) {
  std::string key = graph_key(layer, v);
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
  Evaluation& e = cache_.at(graph_key(layer, v));
  if (!e.fidelity_asked && fidelity_ && e.status == EvalStatus::kOk) {
    e.fidelity_asked = true;
    // Forms that compute the same function (k_layout, sliding_cache) share one figure: the
    // oracle is asked of the variant with those axes at their defaults.
    e.snr_db = fidelity_->snr_db(layer, model::design_space().numerics_representative(v));
  }
  return e.snr_db;
}

}  // namespace layoutx::explorer
