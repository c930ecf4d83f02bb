// Hugging Face config.json -> ModelSpec, for the hybrid and plain decoder families users export.
// yaml-cpp parses the JSON, so every value keeps its line:col. Unknown keys are fine (configs
// carry many keys layoutx does not need); wrong types and missing required keys are errors,
// all collected. Per family:
//   spark2_5        layer_types; rope_parameters.{sliding,full}_attention.{rope_theta,
//                   partial_rotary_factor}; head-wise gate (g_proj) on.
//   gemma3(_text)   layer_types, else sliding_window_pattern N (layer i full when (i+1)%N==0);
//                   rope_local_base_freq (sliding), rope_theta (full). A multimodal "gemma3"
//                   config is read from its text_config.
//   gemma2          alternating, layer 0 sliding; rope_theta for both.
//   mistral         sliding_window set: every layer slides; null: every layer is full.
//   cohere2         as gemma3's pattern; global (full) layers have no RoPE (rotary_dims 0).
//   llama           no sliding: all full.
//   qwen2 / qwen3   all full unless use_sliding_window: then layers >= max_window_layers slide
//                   (HF Qwen2Config's rule).
// `layer_types` wins over every family rule when present. head_dim defaults to hidden/heads.
// Partial rotary: rotary_dims = int(head_dim * partial_rotary_factor).
#include <algorithm>
#include <cmath>
#include <set>
#include <filesystem>

#include "model/layer_type_list.h"
#include "model/limits.h"
#include "model/model_loader.h"
#include "support/error.h"
#include "support/yaml_reader.h"

namespace layoutx::model {

namespace {

bool present(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }

std::optional<Family> family_of(const std::string& t) { return parse_family(t); }
constexpr const char* kSupported = "spark2_5, gemma3, gemma3_text, gemma2, mistral, cohere2, llama, qwen2, qwen3";

// Activation names of transformers' ACT2FN that layoutx models.
std::optional<Activation> activation_of(const std::string& s) {
  if (s == "gelu") return Activation::kGelu;
  if (s == "gelu_pytorch_tanh" || s == "gelu_new" || s == "gelu_fast" || s == "gelu_tanh")
    return Activation::kGeluTanh;
  if (s == "silu" || s == "swish") return Activation::kSilu;
  return std::nullopt;
}

// theta and partial_rotary_factor of one layer type, as far as the config states them.
struct RopeRead {
  std::optional<double> theta;
  std::optional<double> factor;
};

RopeRead read_rope_map(const std::string& file, const YAML::Node& n, const std::string& path,
                       ErrorList& errors) {
  RopeRead r;
  MapReader m(file, n, path, errors);
  if (!m.ok()) return r;
  r.theta = m.number("rope_theta", false, 0);
  r.factor = m.number("partial_rotary_factor", false, 0, 1);
  return r;
}

// JSON strings are quoted scalars, which yaml-cpp would still convert to numbers and bools
// ("6912" -> 6912). A config with a string where a number belongs is wrong: report it, then
// drop the key from further reading by returning true.
bool quoted_where_plain(MapReader& c, const char* key, const char* want) {
  if (!c.has(key)) return false;
  const YAML::Node& map = c.node();
  YAML::Node n = map[key];
  if (!n.IsScalar() || n.Tag() != "!") return false;
  c.allow(key);
  c.error(key, std::string("must be ") + want + ", got the string \"" + n.Scalar() + "\"");
  return true;
}

ModelSpec read_hf(const YAML::Node& doc, const std::string& file) {
  ErrorList errors;
  MapReader root(file, doc, "", errors);
  errors.throw_if_any();

  // Which family: decides the defaults and the layer rule.
  auto model_type = root.string("model_type", true);
  errors.throw_if_any();
  auto family = family_of(*model_type);
  if (!family) {
    root.error("model_type", "unsupported model type '" + *model_type + "' (supported: " + kSupported + ")");
    errors.throw_if_any();
  }
  // A multimodal Gemma 3 config nests the decoder under text_config.
  YAML::Node text = root.child("text_config", false);
  bool nested = *family == Family::kGemma3 && present(text);
  MapReader c(file, nested ? text : doc, nested ? "text_config" : "", errors);
  errors.throw_if_any();

  // Numbers and booleans given as JSON strings are type errors.
  std::set<std::string> quoted;
  for (const char* k : {"num_hidden_layers", "hidden_size", "intermediate_size", "num_attention_heads",
                        "num_key_value_heads", "head_dim", "vocab_size", "sliding_window", "sliding_window_pattern",
                        "max_window_layers"})
    if (quoted_where_plain(c, k, "an integer")) quoted.insert(k);
  for (const char* k : {"rms_norm_eps", "layer_norm_eps", "rope_theta", "rope_local_base_freq", "partial_rotary_factor"})
    if (quoted_where_plain(c, k, "a number")) quoted.insert(k);
  if (quoted_where_plain(c, "use_sliding_window", "true or false")) quoted.insert("use_sliding_window");
  auto integer = [&](const char* k, bool required, int64_t min, int64_t max) -> std::optional<int64_t> {
    return quoted.count(k) ? std::nullopt : c.integer(k, required, min, max);
  };
  auto number = [&](const char* k, double min, double max) -> std::optional<double> {
    return quoted.count(k) ? std::nullopt : c.number(k, false, min, max);
  };

  // Dimensions.
  auto layers = integer("num_hidden_layers", true, 1, limits::kMaxLayers);
  auto hidden = integer("hidden_size", true, 1, limits::kMaxHidden);
  auto intermediate = integer("intermediate_size", true, 1, limits::kMaxIntermediate);
  auto heads = integer("num_attention_heads", true, 1, limits::kMaxHeads);
  auto kv_heads = integer("num_key_value_heads", false, 1, limits::kMaxHeads);
  auto head_dim = integer("head_dim", false, 1, limits::kMaxHeadDim);
  auto vocab = integer("vocab_size", true, 1, limits::kMaxVocab);
  if (!kv_heads) kv_heads = heads;
  if (!head_dim && hidden && heads) {
    if (*hidden % *heads != 0)
      c.error("head_dim", "required when hidden_size (" + std::to_string(*hidden) +
                              ") is not a multiple of num_attention_heads, got none");
    else
      head_dim = *hidden / *heads;
  }
  if (heads && kv_heads && *heads % *kv_heads != 0)
    c.error("num_key_value_heads", "must divide num_attention_heads (" + std::to_string(*heads) + "), got " +
                                       std::to_string(*kv_heads));

  // Norm epsilon (Cohere2 uses a LayerNorm and names it layer_norm_eps) and activation
  // (Gemma names it hidden_activation; its hidden_act is a legacy field).
  auto eps = number("rms_norm_eps", 0, 1);
  if (!eps && *family == Family::kCohere2) eps = number("layer_norm_eps", 0, 1);
  bool gemma = *family == Family::kGemma2 || *family == Family::kGemma3;
  std::string act_key = gemma && c.has("hidden_activation") ? "hidden_activation" : "hidden_act";
  auto act_name = c.string(act_key, false);
  Activation activation = gemma ? Activation::kGeluTanh : *family == Family::kSpark ? Activation::kGelu
                                                                                    : Activation::kSilu;
  if (act_name) {
    if (auto a = activation_of(*act_name)) activation = *a;
    else c.error(act_key, "unsupported activation (gelu, gelu_pytorch_tanh, gelu_new, silu), got '" + *act_name + "'");
  }

  // Which layers slide.
  auto window = integer("sliding_window", false, 2, limits::kMaxContext);
  auto pattern = integer("sliding_window_pattern", false, 1, limits::kMaxLayers);
  auto use_sliding = quoted.count("use_sliding_window") ? std::nullopt : c.boolean("use_sliding_window", false);
  auto max_window_layers = integer("max_window_layers", false, 0, limits::kMaxLayers);
  YAML::Node listed = c.child("layer_types", false);
  std::vector<LayerType> types;
  bool types_ok = layers.has_value();
  if (present(listed)) {
    auto read = read_layer_type_list(c, listed, "layer_types", "sliding_attention", "full_attention", errors);
    if (!read) {
      types_ok = false;
    } else {
      types = *read;
      if (types_ok && static_cast<int64_t>(types.size()) != *layers) {
        c.error("layer_types", "must have num_hidden_layers (" + std::to_string(*layers) + ") entries, got " +
                                   std::to_string(types.size()));
        types_ok = false;
      }
    }
  } else if (types_ok) {
    for (int64_t i = 0; i < *layers; ++i) {
      LayerType t = LayerType::kFull;
      switch (*family) {
        case Family::kSpark:
          if (i == 0) c.error("layer_types", "required for spark2_5, got none");
          types_ok = false;
          break;
        case Family::kGemma3:
        case Family::kCohere2:
          if (!pattern) {
            if (i == 0 && !c.has("sliding_window_pattern"))  // (a wrong type is reported already)
              c.error("sliding_window_pattern", "required when layer_types is absent, got none");
            types_ok = false;
            break;
          }
          t = (i + 1) % *pattern == 0 ? LayerType::kFull : LayerType::kSliding;
          break;
        case Family::kGemma2: t = i % 2 == 0 ? LayerType::kSliding : LayerType::kFull; break;
        case Family::kMistral: t = window ? LayerType::kSliding : LayerType::kFull; break;
        case Family::kLlama: t = LayerType::kFull; break;
        case Family::kQwen2:
        case Family::kQwen3:
          t = use_sliding.value_or(false) && window && i >= max_window_layers.value_or(0) ? LayerType::kSliding
                                                                                          : LayerType::kFull;
          break;
      }
      types.push_back(t);
    }
  }
  bool slides = types_ok && std::count(types.begin(), types.end(), LayerType::kSliding) > 0;
  if (slides && !window && !c.has("sliding_window"))
    c.error("sliding_window", "required when a layer slides, got none");

  // Rotary embedding per layer type.
  auto theta = number("rope_theta", 0, HUGE_VAL);
  auto local_theta = number("rope_local_base_freq", 0, HUGE_VAL);
  auto factor = number("partial_rotary_factor", 0, 1);
  RopeRead sliding_rope, full_rope;
  YAML::Node params = c.child("rope_parameters", false);
  if (present(params)) {
    MapReader p(file, params, c.key_path("rope_parameters"), errors);
    if (p.ok()) {
      YAML::Node s = p.child("sliding_attention", false), f = p.child("full_attention", false);
      if (present(s) || present(f)) {
        if (present(s)) sliding_rope = read_rope_map(file, s, p.key_path("sliding_attention"), errors);
        if (present(f)) full_rope = read_rope_map(file, f, p.key_path("full_attention"), errors);
      } else {
        // HF 5.x flat form: one rope_parameters for every layer.
        RopeRead flat = read_rope_map(file, params, c.key_path("rope_parameters"), errors);
        sliding_rope = full_rope = flat;
      }
    }
  }
  // The layer's structure: the family's (model/model_spec.cc family_structure), then the keys
  // that change it. A key whose value layoutx does not model is refused, naming it.
  LayerStructure structure = family_structure(*family);
  auto refuse_true = [&](const char* key, const char* why) {
    if (auto b = c.boolean(key, false); b && *b) c.error(key, std::string("true is not modelled (") + why + ")");
  };
  refuse_true("mlp_bias", "MLP projections with biases");
  if (*family == Family::kQwen2) {
    // Qwen2 always has q/k/v biases (its config has no key for them).
  } else {
    refuse_true("attention_bias", "q/k/v/o projections with biases");
  }
  if (auto qk = c.boolean("use_qk_norm", false); qk && *qk != structure.qk_norm)
    c.error("use_qk_norm", std::string(*qk ? "true" : "false") + " is not modelled for " + to_string(*family) +
                               " (its layer " + (structure.qk_norm ? "has" : "has no") + " q/k norm)");
  auto qpas = number("query_pre_attn_scalar", 0, HUGE_VAL);
  if (qpas) {
    if (!gemma) c.error("query_pre_attn_scalar", "only Gemma 2/3 scale queries by it");
    else if (*qpas <= 0) c.error("query_pre_attn_scalar", "must be positive");
    else structure.query_scale = 1.0 / std::sqrt(*qpas);
  }
  auto softcap = [&](const char* key) -> double {
    if (!c.has(key) || !present(c.node()[key])) { c.allow(key); return 0; }
    auto v = number(key, 0, HUGE_VAL);
    if (v && *family != Family::kGemma2 && *v > 0) {
      c.error(key, std::string("softcapping is modelled for gemma2 only, got ") + std::to_string(*v));
      return 0;
    }
    return v.value_or(0);
  };
  structure.attn_softcap = softcap("attn_logit_softcapping");
  double final_softcap = softcap("final_logit_softcapping");
  auto tie = c.boolean("tie_word_embeddings", false);
  auto logit_scale = number("logit_scale", 0, HUGE_VAL);
  if (logit_scale && *family != Family::kCohere2) c.error("logit_scale", "only Cohere scales its logits");

  // rope_scaling: linear or llama3; others change the angles in ways layoutx does not model.
  RopeSpec scaling;
  YAML::Node rs = c.child("rope_scaling", false);
  if (present(rs)) {
    MapReader m(file, rs, c.key_path("rope_scaling"), errors);
    if (m.ok()) {
      auto type = m.string("rope_type", false);
      if (!type) type = m.string("type", false);
      auto factor = m.number("factor", false, 0, HUGE_VAL);
      auto low = m.number("low_freq_factor", false, 0, HUGE_VAL);
      auto high = m.number("high_freq_factor", false, 0, HUGE_VAL);
      auto orig = m.integer("original_max_position_embeddings", false, 1, limits::kMaxContext);
      if (!type) {
        m.error("rope_type", "required in rope_scaling (linear or llama3), got none");
      } else if (*type == "default") {
      } else if (*type == "linear" || *type == "llama3") {
        scaling.scaling = *type == "linear" ? RopeScaling::kLinear : RopeScaling::kLlama3;
        if (!factor || *factor <= 0) m.error("factor", "required and positive for rope_type " + *type);
        else scaling.factor = *factor;
        if (scaling.scaling == RopeScaling::kLlama3) {
          if (!low || !high || !orig)
            m.error("rope_type", "llama3 needs low_freq_factor, high_freq_factor and original_max_position_embeddings");
          else if (*high <= *low)
            m.error("high_freq_factor", "must exceed low_freq_factor");
          else {
            scaling.low_freq_factor = *low;
            scaling.high_freq_factor = *high;
            scaling.original_context = static_cast<int>(*orig);
          }
        }
      } else {
        m.error("rope_type", "unsupported rope scaling '" + *type + "' (supported: linear, llama3)");
      }
      for (const char* k : {"rope_type", "type", "factor", "low_freq_factor", "high_freq_factor",
                            "original_max_position_embeddings"})
        m.allow(k);
    }
  }
  errors.throw_if_any();

  // Build.
  ModelSpec m;
  auto name = root.string("_name_or_path", false);
  m.name = name && !name->empty() ? *name : std::filesystem::path(file).stem().string();
  m.source = file;
  m.hidden = static_cast<int>(*hidden);
  m.intermediate = static_cast<int>(*intermediate);
  m.heads = static_cast<int>(*heads);
  m.kv_heads = static_cast<int>(*kv_heads);
  m.head_dim = static_cast<int>(*head_dim);
  m.vocab = static_cast<int>(*vocab);
  m.rms_eps = eps.value_or(1e-6);
  m.activation = activation;
  m.head_gate = *family == Family::kSpark;
  m.layer_types = types;
  if (slides) m.sliding_window = static_cast<int>(*window);
  double base = theta.value_or(10000.0);  // transformers' default rope_theta
  auto dims = [&](std::optional<double> f) {
    return static_cast<int>(static_cast<double>(m.head_dim) * f.value_or(factor.value_or(1.0)));
  };
  m.rope_sliding = {sliding_rope.theta.value_or(local_theta.value_or(base)), dims(sliding_rope.factor)};
  m.rope_full = {full_rope.theta.value_or(base), dims(full_rope.factor)};
  if (*family == Family::kCohere2) m.rope_full.rotary_dims = 0;  // global layers: no positional encoding
  // rope_scaling rescales every layer's angles, except Gemma 3's local (sliding) layers, whose
  // rope_local_base_freq rotary is unscaled (HF Gemma3 builds their rotary without rope_scaling).
  auto scaled = [&](RopeSpec r) {
    r.scaling = scaling.scaling;
    r.factor = scaling.factor;
    r.low_freq_factor = scaling.low_freq_factor;
    r.high_freq_factor = scaling.high_freq_factor;
    r.original_context = scaling.original_context;
    return r;
  };
  if (scaling.scaling != RopeScaling::kNone) {
    m.rope_full = scaled(m.rope_full);
    if (*family != Family::kGemma3) m.rope_sliding = scaled(m.rope_sliding);
  }
  m.family = *family;
  m.structure = structure;
  // tie_word_embeddings: transformers' PretrainedConfig default is true; Llama, Mistral, Qwen2
  // and Qwen3's configs default it to false.
  const bool tie_default = gemma || *family == Family::kCohere2 || *family == Family::kSpark;
  m.tied_embeddings = tie.value_or(tie_default);
  if (gemma) m.embedding_scale = std::sqrt(double(m.hidden));  // Gemma scales the embedded token
  m.final_softcap = final_softcap;
  if (logit_scale) m.logit_scale = *logit_scale;
  m.validate();
  return m;
}

}  // namespace

ModelSpec import_hf_config_text(const std::string& text, const std::string& name) {
  return read_hf(load_yaml_text(text, name), name);
}

ModelSpec import_hf_config(const std::string& path) { return read_hf(load_yaml_file(path), path); }

}  // namespace layoutx::model
