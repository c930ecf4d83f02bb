// One layer's decode steps as the device runtime drives them (runtime.h's simulate is a loop
// over them): per step it builds the graph inputs (hidden state, rotary tables of the absolute
// position, mask), runs the graph and keeps the K/V cache in the variant's form. The cache can
// also be set to its state before any step from the tokens' own entries (checkpoints.h).
#pragma once
#include <vector>

#include "model/numerics/kv_cache.h"
#include "model/numerics/runtime.h"

namespace layoutx::model::numerics {

// A token's K/V cache entry as the graph writes it: k and v, each [kv_heads * head_dim] in
// (head, dim) order.
template <typename T>
struct KvEntry {
  std::vector<T> k, v;
};

template <typename T>
class DecodeRunner {
 public:
  // The executor over `weights` (made with options.simulate_precision); the cache starts empty.
  DecodeRunner(const LayerGraph& graph, PreparedWeights<T>& weights, const SimOptions& options);
  ~DecodeRunner();  // hands the caches back to the thread's BufferPool
  DecodeRunner(const DecodeRunner&) = delete;
  DecodeRunner& operator=(const DecodeRunner&) = delete;

  // Runs step t (position t) on token x over the cache as it stands; the layer's hidden output
  // stays in output() until keep_cache(t). Throws Error if x has the wrong size.
  void run(int t, const std::vector<double>& x, const StepObserver<T>& observe = {});
  const Tensor<T>& output() { return exec_.output(Role::kHiddenOut); }
  // Takes step t's K/V into the cache (roll: the returned window; new_entry: its slot).
  void keep_cache(int t);
  // The cache as it stands before step t when entries[s] (s < t) are what steps s wrote and
  // nothing changed them since (exact for new_entry; for the roll, see rolled_entries_settled).
  void set_cache_before(int t, const std::vector<KvEntry<T>>& entries);
  // Roll form, after run(t) and before keep_cache(t): true if the returned window holds every
  // entry of a token s < `since` unchanged (only moved by one slot): their re-encoding has
  // reached its fixed point, so more rolls would not change them either. Always true for
  // new_entry (nothing re-encodes a written entry).
  bool rolled_entries_settled(int t, int since);

  Executor<T>& executor() { return exec_; }

 private:
  const LayerGraph& graph_;
  SimOptions options_;
  Executor<T> exec_;
  int64_t kv_, head_dim_, entries_, hidden_;
  bool window_, caches_in_dtype_;
  KLayout k_layout_;  // the K cache's layout (kv_cache.h)
  double masked_;
  RoleTensors<T> in_;
  std::vector<double> cos_, sin_;
};

extern template class DecodeRunner<float>;
extern template class DecodeRunner<double>;

}  // namespace layoutx::model::numerics
