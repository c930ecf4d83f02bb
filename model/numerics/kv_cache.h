// The device runtime's K/V cache rules, in one place for the runtime simulation (runtime.cc) and
// the ONNX Runtime driver (emit/history.cc). Caches: K [kv_heads, head_dim, N] and
// V [kv_heads, N, head_dim], N = the layer's cache entries; they start empty (every slot masked).
//   returns=window     the layer returns the updated window, which becomes the next cache (roll):
//                      the entries written so far are the newest, at the end of the window;
//   returns=new_entry  the layer returns only the new K/V; the runtime writes it into ring slot
//                      t mod N (sliding) or slot t (full, append; no slot once t >= N).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "model/graph.h"

namespace layoutx::model::numerics {

// The slot step t's new entry is written to (returns=new_entry), or -1: none (a full layer's
// last token, t >= N, whose entry no later step reads).
inline int64_t kv_entry_slot(LayerType type, int64_t t, int64_t entries) {
  const int64_t slot = type == LayerType::kSliding ? t % entries : t;
  return slot < entries ? slot : -1;
}

// Whether cache slot j holds a written entry after t steps (the mask of step t leaves it open);
// an unwritten slot is masked.
inline bool kv_slot_written(KvReturn returns, int64_t t, int64_t j, int64_t entries) {
  const int64_t written = std::min(t, entries);
  return returns == KvReturn::kWindow ? j >= entries - written : j < written;
}

// The K cache's shape: [kv_heads, head_dim, N] transposed (k_layout default), or
// [kv_heads, N, head_dim] as rows (k_layout=rows, V's layout).
inline Shape k_cache_shape(KLayout layout, int64_t kv_heads, int64_t head_dim, int64_t entries) {
  return layout == KLayout::kRows ? Shape{kv_heads, entries, head_dim} : Shape{kv_heads, head_dim, entries};
}
// Flat offset of key element (h, d) of `slot` in a K cache of `layout`: the new key is written
// as a column (transposed) or a row (rows).
inline size_t k_offset(KLayout layout, int64_t h, int64_t d, int64_t slot, int64_t head_dim, int64_t entries) {
  return static_cast<size_t>(layout == KLayout::kRows ? (h * entries + slot) * head_dim + d
                                                      : (h * head_dim + d) * entries + slot);
}

// Whether slot j is open to step t's query (the mask leaves it 0): written, and for a sliding
// layer (window > 0) no older than the window: its token s has t - s <= window - 1 (the query
// sees the last `window` tokens, its own included). The age test only bites when the cache holds
// more than window-1 entries (sliding_cache=context); a window-sized cache's entries are all in it.
inline bool kv_slot_open(KvReturn returns, int64_t t, int64_t j, int64_t entries, int64_t window) {
  if (!kv_slot_written(returns, t, j, entries)) return false;
  if (window <= 0 || entries < window) return true;
  // Age t - s of the token in slot j: roll keeps the newest at the end; new_entry writes token s
  // into slot s mod N (the newest written at or before t-1).
  const int64_t age = returns == KvReturn::kWindow ? entries - j : (t - 1 - j) % entries + 1;
  return age <= window - 1;
}

// Writes a step's new entry, k [kv_heads, head_dim, 1] (rows: [kv_heads, 1, head_dim]: the same
// flat order) and v [kv_heads, 1, head_dim], into `slot` of the caches k_cache
// (k_cache_shape) and v_cache [kv_heads, N, head_dim].
template <typename T>
void write_kv_entry(std::vector<T>& k_cache, std::vector<T>& v_cache, const std::vector<T>& k,
                    const std::vector<T>& v, int64_t kv_heads, int64_t head_dim, int64_t entries, int64_t slot,
                    KLayout k_layout = KLayout::kTransposed) {
  for (int64_t h = 0; h < kv_heads; ++h)
    for (int64_t d = 0; d < head_dim; ++d) {
      const auto in = static_cast<size_t>(h * head_dim + d);
      k_cache[k_offset(k_layout, h, d, slot, head_dim, entries)] = k[in];
      v_cache[static_cast<size_t>((h * entries + slot) * head_dim + d)] = v[in];
    }
}

}  // namespace layoutx::model::numerics
