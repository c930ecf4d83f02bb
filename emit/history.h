// The runtime's part around one emitted layer over a history of tokens, as the ORT side's driver
// (the harness "plays the runtime"): it owns the K/V cache between steps, builds each step's
// inputs (hidden state, cache, mask, rotary tables) and takes the step's K/V outputs back the way
// the device runtime would, by the rules the runtime simulation uses (model/numerics/kv_cache.h:
// roll, ring slot, append; rotary tables from model/numerics/runtime.h):
//   returns=window     k_out/v_out become the next k_cache/v_cache as they are (roll);
//   returns=new_entry  the entry is written into slot t mod N (sliding: the ring) or slot t
//                      (full: append), and that slot's mask is cleared.
// The cache starts empty (every slot masked), so the first steps check the not-yet-full case.
#pragma once
#include <cstdint>

#include "emit/tensor_files.h"
#include "model/graph.h"

namespace layoutx::emit {

class LayerRuntime {
 public:
  // `masked`: the mask value of an unwritten slot (numerics::default_mask_value of the
  // variant's precision: -1e4 for float graphs).
  LayerRuntime(const model::LayerGraph& g, float masked);

  int step() const { return t_; }
  // Steps this layer can take from an empty cache: unbounded for sliding/window layers,
  // cache_entries + 1 for a full layer that appends (its cache is then full).
  int64_t max_steps() const;

  // Inputs of the current step, by role name, with `hidden` ([1, hidden]) as hidden_in.
  TensorMap inputs(const Tensor& hidden) const;
  // Takes the step's outputs (k_out, v_out by role name) into the cache and advances t.
  // Throws Error if an output is missing or has the wrong shape.
  void absorb(const TensorMap& outputs);

  // Rotary tables of a position (NeoX halves over the leading rotary_dims).
  static Tensor rope_cos(const model::LayerSpec& L, int64_t position);
  static Tensor rope_sin(const model::LayerSpec& L, int64_t position);

 private:
  const model::LayerGraph& g_;
  float masked_;
  int t_ = 0;
  Tensor k_cache_, v_cache_;  // written slots: model/numerics/kv_cache.h's rules after t_ steps
};

}  // namespace layoutx::emit
