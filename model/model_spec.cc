#include "model/model_spec.h"

#include <cmath>

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

const char* to_string(RopeScaling s) {
  switch (s) {
    case RopeScaling::kNone: return "none";
    case RopeScaling::kLinear: return "linear";
    case RopeScaling::kLlama3: return "llama3";
  }
  return "?";
}

double rope_inv_freq(const RopeSpec& rope, int i) {
  const int r = rope.rotary_dims;
  const double f = std::pow(rope.theta, -2.0 * i / r);  // the unscaled frequency, as always computed
  switch (rope.scaling) {
    case RopeScaling::kNone: return f;
    case RopeScaling::kLinear: return f / rope.factor;
    case RopeScaling::kLlama3: {
      // Wavelengths (positions per turn) longer than original_context / low_freq_factor are
      // slowed by `factor`; shorter than original_context / high_freq_factor kept; between,
      // interpolated linearly in original_context / wavelength.
      const double wavelen = 2.0 * M_PI / f;
      const double low_wavelen = rope.original_context / rope.low_freq_factor;
      const double high_wavelen = rope.original_context / rope.high_freq_factor;
      if (wavelen > low_wavelen) return f / rope.factor;
      if (wavelen < high_wavelen) return f;
      const double smooth = (rope.original_context / wavelen - rope.low_freq_factor) /
                            (rope.high_freq_factor - rope.low_freq_factor);
      return (1.0 - smooth) * f / rope.factor + smooth * f;
    }
  }
  return f;
}

const char* to_string(Family f) {
  switch (f) {
    case Family::kSpark: return "spark2_5";
    case Family::kLlama: return "llama";
    case Family::kQwen2: return "qwen2";
    case Family::kQwen3: return "qwen3";
    case Family::kMistral: return "mistral";
    case Family::kGemma2: return "gemma2";
    case Family::kGemma3: return "gemma3_text";
    case Family::kCohere2: return "cohere2";
  }
  return "?";
}

std::optional<Family> parse_family(const std::string& s) {
  if (s == "spark2_5") return Family::kSpark;
  if (s == "llama") return Family::kLlama;
  if (s == "qwen2") return Family::kQwen2;
  if (s == "qwen3") return Family::kQwen3;
  if (s == "mistral") return Family::kMistral;
  if (s == "gemma2") return Family::kGemma2;
  if (s == "gemma3" || s == "gemma3_text") return Family::kGemma3;
  if (s == "cohere2") return Family::kCohere2;
  return std::nullopt;
}

const char* to_string(NormKind k) {
  switch (k) {
    case NormKind::kRms: return "rms";
    case NormKind::kRmsOnePlus: return "rms_one_plus";
    case NormKind::kLayer: return "layer";
  }
  return "?";
}

// From each model_type's HF modelling code (modeling_<type>.py): which norms, where, biases.
// Sizes, scales and softcaps come from the config (hf_import.cc, model_loader.cc).
LayerStructure family_structure(Family f) {
  LayerStructure s;
  switch (f) {
    case Family::kSpark: return s;  // fused q_k_v_proj, pre-norms only
    case Family::kLlama:
    case Family::kMistral: s.qkv_fused = false; return s;
    case Family::kQwen2: s.qkv_fused = false; s.qkv_bias = true; return s;
    case Family::kQwen3: s.qkv_fused = false; s.qk_norm = true; return s;
    case Family::kGemma2:
      s.qkv_fused = false; s.norm = NormKind::kRmsOnePlus; s.sandwich_norms = true;
      return s;
    case Family::kGemma3:
      s.qkv_fused = false; s.norm = NormKind::kRmsOnePlus; s.sandwich_norms = true; s.qk_norm = true;
      return s;
    case Family::kCohere2:
      s.qkv_fused = false; s.norm = NormKind::kLayer; s.parallel_block = true;
      return s;
  }
  return s;
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

void ModelSpec::check_context(int context, const std::string& what) const {
  if (context < 2 || context > limits::kMaxContext)
    throw Error(what + ": must be in [2, " + std::to_string(limits::kMaxContext) + "] tokens, got " +
                std::to_string(context));
  if (count(LayerType::kSliding) > 0 && sliding_window && context < *sliding_window)
    throw Error(what + ": " + std::to_string(context) + " is below the sliding window of " + name + " (" +
                std::to_string(*sliding_window) +
                " tokens); a sliding layer only differs from a full one once the context exceeds it");
}

LayerSpec ModelSpec::layer(LayerType t, int context) const {
  if (count(t) == 0)
    throw Error(name + ": the model has no " + to_string(t) + " layers (its " +
                std::to_string(num_layers()) + " layers are all " +
                (t == LayerType::kSliding ? "full" : "sliding") + ")");
  if (t == LayerType::kSliding || context < 2 || context > limits::kMaxContext) check_context(context, "ctx");
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
  s.structure = structure;
  if (t == LayerType::kSliding) {
    s.window = *sliding_window;
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
  if (structure.qkv_bias && structure.qkv_fused)
    e.add(pre + "structure.qkv_bias: q/k/v biases are modelled on separate projections only (qkv_fused: false)");
  if (structure.parallel_block && structure.sandwich_norms)
    e.add(pre + "structure: parallel_block and sandwich_norms exclude each other");
  if (!(structure.query_scale >= 0)) e.add(pre + "query_scale: must be positive or 0 (1/sqrt(head_dim))");
  if (!(structure.attn_softcap >= 0)) e.add(pre + "attn_logit_softcapping: must be positive or 0 (none)");
  if (!(final_softcap >= 0)) e.add(pre + "final_logit_softcapping: must be positive or 0 (none)");
  for (auto [k, r] : {std::pair{"rope.sliding", rope_sliding}, std::pair{"rope.full", rope_full}})
    if (r.scaling != RopeScaling::kNone && !(r.factor > 0))
      e.add(pre + k + ".factor: rope scaling needs a positive factor");
  e.throw_if_any();
}

}  // namespace layoutx::model
