// Every field of a layer spec, by name: for the keys that must cover them all (a cache key that
// misses a field lets two different graphs share one entry, silently). The structured bindings in
// for_each_layer_field name every member of LayerSpec, RopeSpec and LayerStructure: adding or
// removing a field fails to compile there until the visitor names it too.
#pragma once
#include <initializer_list>
#include <string>
#include <string_view>

#include "model/model_spec.h"

namespace layoutx::model {

// Calls f(name, field) for each leaf field of `l` in declaration order; the nested structs' fields
// as "rope.theta", "structure.norm". `Spec` is LayerSpec or const LayerSpec (then const fields).
template <typename Spec, typename F>
void for_each_layer_field(Spec& l, F&& f) {
  auto& [type, window, context, cache_entries, hidden, intermediate, heads, kv_heads, head_dim, rope, rms_eps, activation,
         head_gate, structure] = l;
  f("type", type);
  f("window", window);
  f("context", context);
  f("cache_entries", cache_entries);
  f("hidden", hidden);
  f("intermediate", intermediate);
  f("heads", heads);
  f("kv_heads", kv_heads);
  f("head_dim", head_dim);
  auto& [theta, rotary_dims, scaling, factor, low_freq_factor, high_freq_factor, original_context] = rope;
  f("rope.theta", theta);
  f("rope.rotary_dims", rotary_dims);
  f("rope.scaling", scaling);
  f("rope.factor", factor);
  f("rope.low_freq_factor", low_freq_factor);
  f("rope.high_freq_factor", high_freq_factor);
  f("rope.original_context", original_context);
  f("rms_eps", rms_eps);
  f("activation", activation);
  f("head_gate", head_gate);
  auto& [norm, sandwich_norms, qk_norm, parallel_block, qkv_fused, qkv_bias, query_scale, attn_softcap] = structure;
  f("structure.norm", norm);
  f("structure.sandwich_norms", sandwich_norms);
  f("structure.qk_norm", qk_norm);
  f("structure.parallel_block", parallel_block);
  f("structure.qkv_fused", qkv_fused);
  f("structure.qkv_bias", qkv_bias);
  f("structure.query_scale", query_scale);
  f("structure.attn_softcap", attn_softcap);
}

// Every field of `l` but those named in `except`, each value followed by '/': integers in decimal,
// reals in their shortest text that reads back exactly, enums by name, booleans as 0/1. Two specs
// differing in any field not excepted never share a key.
std::string layer_key(const LayerSpec& l, std::initializer_list<std::string_view> except = {});

}  // namespace layoutx::model
