#include "emit/io_signature.h"

#include <string>

namespace layoutx::emit {

namespace {

using model::KvReturn;
using model::LayerType;
using model::Role;

std::string meaning(Role role, const model::LayerGraph& g) {
  const bool window = g.variant.returns() == KvReturn::kWindow;
  const bool sliding = g.layer.type == LayerType::kSliding;
  const std::string N = std::to_string(g.layer.cache_entries);
  switch (role) {
    case Role::kHiddenIn: return "the token's hidden state (the previous layer's hidden_out)";
    case Role::kKCache:
      return "past keys, transposed: [kv_heads, head_dim, slot]; " +
             std::string(window ? "slot N-1 is the newest entry (last step's k_out as returned)"
                                : "the runtime's ring/append buffer; slot order is free");
    case Role::kVCache:
      return "past values: [kv_heads, slot, head_dim], the same slot order as k_cache";
    case Role::kMask:
      return "additive mask over the " + N + " cache slots then the new token: 0 where a slot holds an entry, "
             "a finite large negative where it is not yet written (-1e4 for float graphs, -100 for quantized ones: "
             "never -inf, which turns a fully masked row into NaN and does not survive 16-bit encoding); the last element (the new token) is always 0";
    case Role::kRopeCos:
      return "cos of the current position's rotary angles, NeoX halves: cos(p * theta^(-2i/r)) for i < r/2, repeated";
    case Role::kRopeSin: return "sin of the same angles, same layout as rope_cos";
    case Role::kHiddenOut: return "the layer's output hidden state; feed to the next layer";
    case Role::kKOut:
      if (window) return "the whole updated key window (oldest slot dropped, new key last): becomes next step's k_cache as is";
      return sliding ? "the new key only, [kv_heads, head_dim, 1]: write into k_cache slot (t mod " + N +
                           ") and clear that slot's mask to 0"
                     : "the new key only, [kv_heads, head_dim, 1]: append at slot t (t < " + N +
                           ") and clear that slot's mask to 0";
    case Role::kVOut:
      if (window) return "the whole updated value window: becomes next step's v_cache as is";
      return "the new value only, [kv_heads, 1, head_dim]: write into the same slot as k_out";
    case Role::kNone:
    case Role::kInputNorm:
    case Role::kQkv:
    case Role::kHeadGate:
    case Role::kOutProj:
    case Role::kPostNorm:
    case Role::kMlpGate:
    case Role::kMlpUp:
    case Role::kMlpDown:
    case Role::kQProj:
    case Role::kKProj:
    case Role::kVProj:
    case Role::kQBias:
    case Role::kKBias:
    case Role::kVBias:
    case Role::kQNorm:
    case Role::kKNorm:
    case Role::kAttnPostNorm:
    case Role::kMlpPostNorm:
      break;
  }
  return "";
}

}  // namespace

IoSignature io_signature(const model::LayerGraph& g) {
  IoSignature s;
  for (auto v : g.topological_order()) {
    const auto& n = g.op(v);
    if (n.kind != model::OpKind::kInput && n.kind != model::OpKind::kOutput) continue;
    TensorSpec t{model::role_name(n.role), n.shape, "float32", n.role, meaning(n.role, g)};
    (n.kind == model::OpKind::kInput ? s.inputs : s.outputs).push_back(std::move(t));
  }
  return s;
}

}  // namespace layoutx::emit
