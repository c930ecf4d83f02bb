// ModelSpec: what layoutx needs to know of a decoder to build its decode-step layers.
// LayerSpec: one layer type of it at one context, the input of the graph builder.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace layoutx::model {

enum class LayerType { kSliding, kFull };
const char* to_string(LayerType t);
// "sliding" / "full"; throws Error naming `what` otherwise.
LayerType parse_layer_type(const std::string& s, const std::string& what = "layer");

// The MLP's activation as the checkpoint defines it. The variant's `gelu` axis chooses the
// GELU form for GELU models; SiLU models ignore that axis.
enum class Activation { kGelu, kGeluTanh, kSilu };
const char* to_string(Activation a);

// How a config rescales the rotary frequencies (HF rope_scaling / rope_type).
enum class RopeScaling {
  kNone,
  kLinear,  // every frequency divided by `factor` (positions interpolated): Gemma 3 4B's global layers
  kLlama3,  // Llama 3.x: low frequencies divided by factor, high kept, a smooth ramp between
};
const char* to_string(RopeScaling s);

// Rotary embedding of one layer type. rotary_dims == 0 means no RoPE (Cohere2 global layers).
// Convention: the leading rotary_dims of each head are rotated, NeoX half split inside them,
// frequencies theta^(-2i/rotary_dims), then rescaled by `scaling`.
struct RopeSpec {
  double theta = 10000.0;
  int rotary_dims = 0;
  RopeScaling scaling = RopeScaling::kNone;
  double factor = 1.0;           // kLinear, kLlama3
  double low_freq_factor = 1.0;  // kLlama3
  double high_freq_factor = 4.0; // kLlama3
  int original_context = 8192;   // kLlama3: original_max_position_embeddings (tokens)
  bool operator==(const RopeSpec&) const = default;
};
// Inverse frequency (radians per position) of rotary pair i in [0, rotary_dims/2):
// theta^(-2i/r), rescaled as `rope.scaling` says. The one place the runtime, the reference and
// the emitted history take their angles from.
double rope_inv_freq(const RopeSpec& rope, int i);

// Which family's layer a model is built in (model_type of its HF config).
enum class Family { kSpark, kLlama, kQwen2, kQwen3, kMistral, kGemma2, kGemma3, kCohere2 };
const char* to_string(Family f);  // the HF model_type: spark2_5, llama, qwen2, ...
// Accepts the HF model_type names (gemma3 and gemma3_text both give kGemma3).
std::optional<Family> parse_family(const std::string& s);

// The norm of a family.
enum class NormKind {
  kRms,         // x / rms(x) * w
  kRmsOnePlus,  // x / rms(x) * (1 + w): Gemma's checkpoints store w - 1
  kLayer,       // (x - mean) / sqrt(var + eps) * w, no bias: Cohere's LayerNorm
};
const char* to_string(NormKind k);

// The shape of a family's decoder layer, beyond its sizes: which norms, where, which biases,
// how queries are scaled. The default is Spark2_5's layer.
struct LayerStructure {
  NormKind norm = NormKind::kRms;
  // Gemma 2/3: the attention and MLP outputs are normed before their residual adds
  // (post_attention_layernorm, post_feedforward_layernorm); the MLP's input norm is
  // pre_feedforward_layernorm. Four norms a layer.
  bool sandwich_norms = false;
  bool qk_norm = false;         // per-head norm (over head_dim) of q and k before RoPE: Qwen3, Gemma 3
  bool parallel_block = false;  // Cohere: attention and MLP both read one normed input; y = x + attn + mlp
  bool qkv_fused = true;        // one [q|k|v] projection (Spark's q_k_v_proj) or q_proj, k_proj, v_proj
  bool qkv_bias = false;        // biases on q, k, v (Qwen2); only with separate projections
  double query_scale = 0;       // scores scale; 0: 1/sqrt(head_dim). Gemma: query_pre_attn_scalar^-0.5
  double attn_softcap = 0;      // Gemma 2: scores = tanh(scores / c) * c; 0: none
  bool operator==(const LayerStructure&) const = default;
};
// A family's published layer structure (HF modelling code of that model_type).
LayerStructure family_structure(Family f);

// One layer type at one context: everything the graph builder needs.
struct LayerSpec {
  LayerType type = LayerType::kSliding;
  int window = 0;         // tokens a sliding query sees, current one included; 0 for full layers
  int context = 0;        // context length the step is built for (tokens)
  int cache_entries = 0;  // past K/V entries the graph takes in: window-1 (sliding), context-1 (full)
  int hidden = 0;
  int intermediate = 0;
  int heads = 0;     // query heads
  int kv_heads = 0;  // key/value heads (GQA: heads / kv_heads query heads share one)
  int head_dim = 0;
  RopeSpec rope;
  double rms_eps = 1e-6;
  Activation activation = Activation::kGelu;
  bool head_gate = true;  // head-wise attention gate (g_proj + sigmoid), as in Spark2_5
  LayerStructure structure;

  int group() const { return heads / kv_heads; }
};

struct ModelSpec {
  std::string name;
  std::string source;  // file it was read from
  int hidden = 0;
  int intermediate = 0;
  int heads = 0;
  int kv_heads = 0;
  int head_dim = 0;
  int vocab = 0;
  double rms_eps = 1e-6;
  Activation activation = Activation::kGelu;
  bool head_gate = false;
  std::optional<int> sliding_window;  // tokens incl. the current one; set iff a layer slides
  std::vector<LayerType> layer_types;  // one per layer, in order
  RopeSpec rope_sliding;
  RopeSpec rope_full;
  // The family and its layer structure (the default: Spark2_5).
  Family family = Family::kSpark;
  LayerStructure structure;
  // Around the layers (the embedding and the LM head).
  bool tied_embeddings = false;  // the LM head reuses the embedding matrix
  double embedding_scale = 1.0;  // Gemma: the embedded token times sqrt(hidden)
  double final_softcap = 0;      // Gemma 2: logits = tanh(logits / c) * c; 0: none
  double logit_scale = 1.0;      // Cohere: logits times this

  int num_layers() const { return static_cast<int>(layer_types.size()); }
  int count(LayerType t) const;
  // Indices of the layers of one type, ascending.
  std::vector<int> layers_of(LayerType t) const;
  // The layer type at `context`. Throws Error if the model has no layer of that type, or if
  // a sliding layer is asked for at a context below its window.
  LayerSpec layer(LayerType t, int context) const;
  // Throws Error, prefixed with `what` (the flag or key that gave the context, e.g. "--base-ctx"),
  // if a layer of this model cannot be built at `context`: outside [2, kMaxContext], or below the
  // sliding window when the model has sliding layers. layer() checks the same, as "ctx".
  void check_context(int context, const std::string& what) const;
  // Checks cross-field rules (heads divisible by kv_heads, rotary dims within head dim, ...);
  // throws Error listing every violation, each prefixed with `source`.
  void validate() const;
};

}  // namespace layoutx::model
