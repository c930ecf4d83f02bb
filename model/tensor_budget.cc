#include "model/tensor_budget.h"

#include "model/limits.h"
#include "support/error.h"

namespace layoutx::model {

int64_t layer_tensor_elements(const LayerSpec& l) {
  const int64_t h = l.hidden, q = int64_t{l.heads} * l.head_dim, kv = int64_t{l.kv_heads} * l.head_dim;
  const int64_t attention = h * q + 2 * h * kv + q * h + (l.head_gate ? h * l.heads : 0);
  const int64_t mlp = 3 * h * l.intermediate;
  const int64_t cache = 2 * kv * l.cache_entries;
  return attention + mlp + cache;
}

void check_tensor_budget(const LayerSpec& l, const std::string& who) {
  const int64_t n = layer_tensor_elements(l);
  if (n > limits::kMaxTensorElements)
    throw Error(who + ": the " + to_string(l.type) + " layer at ctx " + std::to_string(l.context) + " has " +
                std::to_string(n) + " weight and cache elements, above the " +
                std::to_string(limits::kMaxTensorElements) + " this verb materialises (README, \"Limits\")");
}

}  // namespace layoutx::model
