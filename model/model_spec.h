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

// Rotary embedding of one layer type. rotary_dims == 0 means no RoPE (Cohere2 global layers).
// Convention: the leading rotary_dims of each head are rotated, NeoX half split inside them,
// frequencies theta^(-2i/rotary_dims).
struct RopeSpec {
  double theta = 10000.0;
  int rotary_dims = 0;
  bool operator==(const RopeSpec&) const = default;
};

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

  int num_layers() const { return static_cast<int>(layer_types.size()); }
  int count(LayerType t) const;
  // Indices of the layers of one type, ascending.
  std::vector<int> layers_of(LayerType t) const;
  // The layer type at `context`. Throws Error if the model has no layer of that type, or if
  // a sliding layer is asked for at a context below its window.
  LayerSpec layer(LayerType t, int context) const;
  // Checks cross-field rules (heads divisible by kv_heads, rotary dims within head dim, ...);
  // throws Error listing every violation, each prefixed with `source`.
  void validate() const;
};

}  // namespace layoutx::model
