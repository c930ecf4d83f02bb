#include "model/model_spec.h"

#include "model/limits.h"
#include "support/error.h"

namespace layoutx::model {

const char* to_string(LayerType t) {
  switch (t) {
    case LayerType::kSliding: return "sliding";
    case LayerType::kFull: return "full";
  }
  return "?";
}

LayerType parse_layer_type(const std::string& s, const std::string& what) {
  if (s == "sliding") return LayerType::kSliding;
  if (s == "full") return LayerType::kFull;
  throw Error(what + ": unknown layer type '" + s + "' (expected sliding or full)");
}

const char* to_string(Activation a) {
  switch (a) {
    case Activation::kGelu: return "gelu";
    case Activation::kGeluTanh: return "gelu_tanh";
    case Activation::kSilu: return "silu";
  }
  return "?";
}

int ModelSpec::count(LayerType t) const {
  int n = 0;
  for (auto x : layer_types) n += x == t;
  return n;
}

std::vector<int> ModelSpec::layers_of(LayerType t) const {
  std::vector<int> r;
  for (int i = 0; i < num_layers(); ++i)
    if (layer_types[i] == t) r.push_back(i);
  return r;
}

LayerSpec ModelSpec::layer(LayerType t, int context) const {
  if (count(t) == 0)
    throw Error(name + ": the model has no " + to_string(t) + " layers (its " +
                std::to_string(num_layers()) + " layers are all " +
                (t == LayerType::kSliding ? "full" : "sliding") + ")");
  if (context < 2 || context > limits::kMaxContext)
    throw Error("ctx: must be in [2, " + std::to_string(limits::kMaxContext) + "] tokens, got " +
                std::to_string(context));
  LayerSpec s;
  s.type = t;
  s.context = context;
  s.hidden = hidden;
  s.intermediate = intermediate;
  s.heads = heads;
  s.kv_heads = kv_heads;
  s.head_dim = head_dim;
  s.rms_eps = rms_eps;
  s.activation = activation;
  s.head_gate = head_gate;
  if (t == LayerType::kSliding) {
    s.window = *sliding_window;
    if (context < s.window)
      throw Error("ctx: " + std::to_string(context) + " is below the sliding window of " + name +
                  " (" + std::to_string(s.window) +
                  " tokens); a sliding layer only differs from a full one once the context exceeds it");
    s.cache_entries = s.window - 1;
    s.rope = rope_sliding;
  } else {
    s.cache_entries = context - 1;
    s.rope = rope_full;
  }
  return s;
}

void ModelSpec::validate() const {
  ErrorList e;
  auto pre = source.empty() ? name + ": " : source + ": ";
  // In [1, max] (model/limits.h): also catches a derived value, e.g. a HF head_dim of hidden/heads.
  auto positive = [&](const char* k, int v, int64_t max) {
    if (v <= 0 || v > max)
      e.add(pre + k + ": must be an integer in [1, " + std::to_string(max) + "], got " + std::to_string(v));
  };
  positive("hidden_size", hidden, limits::kMaxHidden);
  positive("intermediate_size", intermediate, limits::kMaxIntermediate);
  positive("num_attention_heads", heads, limits::kMaxHeads);
  positive("num_key_value_heads", kv_heads, limits::kMaxHeads);
  positive("head_dim", head_dim, limits::kMaxHeadDim);
  if (vocab < 0 || vocab > limits::kMaxVocab)  // 0: not given (a spec built in code)
    e.add(pre + "vocab_size: must be an integer in [1, " + std::to_string(limits::kMaxVocab) + "], got " +
          std::to_string(vocab));
  if (num_layers() > limits::kMaxLayers)
    e.add(pre + "layers: at most " + std::to_string(limits::kMaxLayers) + " layers, got " +
          std::to_string(num_layers()));
  if (sliding_window && *sliding_window > limits::kMaxContext)
    e.add(pre + "sliding_window: must be at most " + std::to_string(limits::kMaxContext) + " tokens, got " +
          std::to_string(*sliding_window));
  if (heads > 0 && kv_heads > 0 && heads % kv_heads != 0)
    e.add(pre + "num_key_value_heads: " + std::to_string(kv_heads) + " does not divide num_attention_heads " +
          std::to_string(heads));
  if (layer_types.empty()) e.add(pre + "layers: the model has no layers");
  bool slides = count(LayerType::kSliding) > 0;
  if (slides && (!sliding_window || *sliding_window < 2))
    e.add(pre + "sliding_window: sliding layers need a window of at least 2 tokens, got " +
          (sliding_window ? std::to_string(*sliding_window) : std::string("none")));
  for (auto [k, r] : {std::pair{"rope.sliding", rope_sliding}, std::pair{"rope.full", rope_full}}) {
    if (r.rotary_dims < 0 || r.rotary_dims > head_dim)
      e.add(pre + k + ".rotary_dims: must be in [0, head_dim=" + std::to_string(head_dim) + "], got " +
            std::to_string(r.rotary_dims));
    else if (r.rotary_dims % 2 != 0)
      e.add(pre + k + ".rotary_dims: must be even (NeoX half split), got " + std::to_string(r.rotary_dims));
    if (r.rotary_dims > 0 && !(r.theta > 0))
      e.add(pre + k + ".theta: must be positive, got " + std::to_string(r.theta));
  }
  e.throw_if_any();
}

}  // namespace layoutx::model
