// Our YAML model specs (schema: the comment block of configs/models/spark-x2.5-1.7b.yaml),
// the --model resolution, and single-field overrides.
// Pipeline of a YAML spec: parse (yaml-cpp) -> validate (MapReader: types, ranges, unknown
// keys, cross-field rules, all collected with file:line:col) -> build -> ModelSpec::validate().
#include "model/model_loader.h"

#include "model/layer_type_list.h"
#include "model/limits.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "support/error.h"
#include "support/paths.h"
#include "support/yaml_reader.h"

namespace layoutx::model {

namespace {

bool present(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }

std::string shown(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// Rotary settings of one layer type as read (fields empty when absent or in error).
struct RopeRead {
  bool given = false;
  std::optional<double> theta;
  std::optional<int64_t> dims;
};

// rope.<type>: {theta, rotary_dims}. theta may be left out only when rotary_dims is 0 (no
// RoPE, as in Cohere2's global layers). rotary_dims must be even and at most head_dim.
RopeRead read_rope(MapReader& rope, const std::string& key, std::optional<int64_t> head_dim,
                   ErrorList& errors) {
  RopeRead r;
  YAML::Node n = rope.child(key, false);
  if (!present(n)) return r;
  r.given = true;
  MapReader m(rope.file(), n, rope.key_path(key), errors);
  if (!m.ok()) return r;
  r.dims = m.integer("rotary_dims", true, 0, limits::kMaxHeadDim);
  bool needs_theta = !r.dims || *r.dims > 0;
  r.theta = m.number("theta", needs_theta, 0);
  if (r.theta && *r.theta <= 0) {
    m.error("theta", "must be positive, got " + shown(*r.theta));
    r.theta.reset();
  }
  if (r.dims && head_dim && *r.dims > *head_dim) {
    m.error("rotary_dims", "must be at most head_dim (" + std::to_string(*head_dim) + "), got " +
                               std::to_string(*r.dims));
    r.dims.reset();
  } else if (r.dims && *r.dims % 2 != 0) {
    m.error("rotary_dims", "must be even (NeoX half split), got " + std::to_string(*r.dims));
    r.dims.reset();
  }
  m.finish();
  return r;
}

// layers: {count, and exactly one of full_every | sliding_every_other | all | types}.
// Returns the per-layer types, or empty on error.
std::vector<LayerType> read_layers(MapReader& top, ErrorList& errors) {
  YAML::Node n = top.child("layers", true);
  if (!present(n)) return {};
  MapReader m(top.file(), n, "layers", errors);
  if (!m.ok()) return {};
  auto count = m.integer("count", true, 1, limits::kMaxLayers);
  static const char* kPatterns[] = {"full_every", "sliding_every_other", "all", "types"};
  std::vector<std::string> given;
  for (const char* p : kPatterns)
    if (m.has(p)) given.push_back(p);
  std::vector<LayerType> types;
  bool ok = true;
  if (given.size() != 1) {
    std::string got = given.empty() ? "none" : "";
    for (const auto& g : given) got += (got.empty() ? "" : ", ") + g;
    m.error("", "needs exactly one of full_every, sliding_every_other, all, types; got " + got);
    ok = false;
  }
  // Read every pattern key given (so each is type-checked and none is reported unknown).
  auto full_every = m.integer("full_every", false, 1, limits::kMaxLayers);
  auto every_other = m.boolean("sliding_every_other", false);
  auto all = m.string("all", false);
  YAML::Node list = m.child("types", false);
  if (all && *all != "sliding" && *all != "full") {
    m.error("all", "must be sliding or full, got '" + *all + "'");
    ok = false;
  }
  if (every_other && !*every_other) {
    m.error("sliding_every_other", "must be true when given (use all: full for no sliding layers), got false");
    ok = false;
  }
  std::vector<LayerType> listed;
  if (present(list)) {
    auto read = read_layer_type_list(m, list, "types", "sliding", "full", errors);
    if (!read) {
      ok = false;
    } else {
      listed = *read;
      if (ok && count && static_cast<int64_t>(listed.size()) != *count) {
        m.error("types", "must have layers.count (" + std::to_string(*count) + ") entries, got " +
                             std::to_string(listed.size()));
        ok = false;
      }
    }
  }
  m.finish();
  if (!ok || !count) return {};
  if (present(list)) return listed;
  for (int64_t i = 0; i < *count; ++i) {
    LayerType t = LayerType::kSliding;
    if (full_every) t = (i + 1) % *full_every == 0 ? LayerType::kFull : LayerType::kSliding;
    else if (every_other) t = i % 2 == 0 ? LayerType::kSliding : LayerType::kFull;
    else if (all) t = *all == "full" ? LayerType::kFull : LayerType::kSliding;
    else return {};
    types.push_back(t);
  }
  return types;
}

// Validates a parsed YAML spec and builds it. Throws Error with every problem found.
ModelSpec read_model_yaml(const YAML::Node& doc, const std::string& file) {
  ErrorList errors;
  MapReader top(file, doc, "", errors);
  if (!top.ok()) errors.throw_if_any();

  // Scalars: types and ranges.
  auto name = top.string("name", true);
  auto hidden = top.integer("hidden_size", true, 1, limits::kMaxHidden);
  auto intermediate = top.integer("intermediate_size", true, 1, limits::kMaxIntermediate);
  auto heads = top.integer("num_attention_heads", true, 1, limits::kMaxHeads);
  auto kv_heads = top.integer("num_key_value_heads", true, 1, limits::kMaxHeads);
  auto head_dim = top.integer("head_dim", true, 1, limits::kMaxHeadDim);
  auto vocab = top.integer("vocab_size", true, 1, limits::kMaxVocab);
  // A plain double (an optional here trips g++ 12's -Wmaybe-uninitialized).
  const auto eps_read = top.number("rms_norm_eps", true);
  const bool eps_ok = eps_read.has_value();
  const double eps = eps_read.value_or(0.0);
  if (eps_ok && eps <= 0) top.error("rms_norm_eps", "must be positive, got " + shown(eps));
  auto act = top.string("hidden_act", true);
  std::optional<Activation> activation;
  if (act) {
    if (*act == "gelu") activation = Activation::kGelu;
    else if (*act == "gelu_tanh") activation = Activation::kGeluTanh;
    else if (*act == "silu") activation = Activation::kSilu;
    else top.error("hidden_act", "must be one of gelu, gelu_tanh, silu, got '" + *act + "'");
  }
  auto head_gate = top.boolean("head_gate", true);
  auto window = top.integer("sliding_window", false, 2, limits::kMaxContext);
  // The family (HF model_type) gives the layer's structure (model_spec.h family_structure);
  // absent: Spark2_5's. The keys after it set what a config states per model.
  auto family_name = top.string("family", false);
  std::optional<Family> family = Family::kSpark;
  if (family_name) {
    family = parse_family(*family_name);
    if (!family)
      top.error("family", "must be one of spark2_5, llama, qwen2, qwen3, mistral, gemma2, gemma3_text, cohere2, got '" +
                              *family_name + "'");
  }
  auto tie = top.boolean("tie_word_embeddings", false);
  auto qpas = top.number("query_pre_attn_scalar", false, 0);
  auto attn_cap = top.number("attn_logit_softcapping", false, 0);
  auto final_cap = top.number("final_logit_softcapping", false, 0);

  // Cross-field: GQA grouping.
  if (heads && kv_heads && *heads % *kv_heads != 0)
    top.error("num_key_value_heads", "must divide num_attention_heads (" + std::to_string(*heads) + "), got " +
                                         std::to_string(*kv_heads));

  // Layer pattern, then the window and rotary settings it calls for.
  std::vector<LayerType> types = read_layers(top, errors);
  bool slides = std::count(types.begin(), types.end(), LayerType::kSliding) > 0;
  bool fulls = std::count(types.begin(), types.end(), LayerType::kFull) > 0;
  if (!types.empty() && slides && !top.has("sliding_window"))
    top.error("sliding_window", "required when a layer slides, got none");
  if (!types.empty() && !slides && window)
    top.error("sliding_window", "no layer slides, so there must be no window, got " + std::to_string(*window));

  RopeRead rs, rf;
  YAML::Node rope_node = top.child("rope", true);
  if (present(rope_node)) {
    MapReader rope(file, rope_node, "rope", errors);
    if (rope.ok()) {
      rs = read_rope(rope, "sliding", head_dim, errors);
      rf = read_rope(rope, "full", head_dim, errors);
      if (slides && !rs.given) rope.error("sliding", "required when a layer slides, got none");
      if (fulls && !rf.given) rope.error("full", "required when a layer is full attention, got none");
      rope.finish();
    }
  }
  top.finish();
  errors.throw_if_any();

  // Build from data known to be valid.
  ModelSpec m;
  m.name = *name;
  m.source = file;
  m.hidden = static_cast<int>(*hidden);
  m.intermediate = static_cast<int>(*intermediate);
  m.heads = static_cast<int>(*heads);
  m.kv_heads = static_cast<int>(*kv_heads);
  m.head_dim = static_cast<int>(*head_dim);
  m.vocab = static_cast<int>(*vocab);
  m.rms_eps = eps;
  m.activation = *activation;
  m.head_gate = *head_gate;
  if (slides) m.sliding_window = static_cast<int>(*window);
  m.layer_types = types;
  if (rs.given) m.rope_sliding = {rs.theta.value_or(0.0), static_cast<int>(*rs.dims)};
  if (rf.given) m.rope_full = {rf.theta.value_or(0.0), static_cast<int>(*rf.dims)};
  m.family = *family;
  m.structure = family_structure(m.family);
  const bool gemma = m.family == Family::kGemma2 || m.family == Family::kGemma3;
  if (qpas && *qpas > 0) m.structure.query_scale = 1.0 / std::sqrt(*qpas);
  if (attn_cap) m.structure.attn_softcap = *attn_cap;
  if (final_cap) m.final_softcap = *final_cap;
  m.tied_embeddings = tie.value_or(gemma || m.family == Family::kCohere2 || m.family == Family::kSpark);
  if (gemma) m.embedding_scale = std::sqrt(double(m.hidden));
  m.validate();
  return m;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Names of the shipped models (configs/models/*.yaml), sorted. configs/models/ also holds
// checkpoint weight maps (*.weights.yaml, read by `parity`): those are not models.
std::vector<std::string> shipped_models() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(config_path("models"), ec)) {
    std::string file = e.path().filename().string();
    if (e.path().extension() == ".yaml" && !ends_with(file, ".weights.yaml"))
      names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

ModelSpec load_model_yaml_text(const std::string& text, const std::string& name) {
  // Parse (a syntax error throws naming file:line:col), then validate and build.
  return read_model_yaml(load_yaml_text(text, name), name);
}

ModelSpec load_model_yaml(const std::string& path) { return read_model_yaml(load_yaml_file(path), path); }

ModelSpec load_model(const std::string& path_or_name) {
  namespace fs = std::filesystem;
  if (ends_with(path_or_name, ".json")) return import_hf_config(path_or_name);
  std::error_code ec;  // an unreadable path is "not a file" here; the message below lists what is accepted
  if ((ends_with(path_or_name, ".yaml") || ends_with(path_or_name, ".yml")) && fs::is_regular_file(path_or_name, ec))
    return load_model_yaml(path_or_name);
  std::string shipped = config_path("models/" + path_or_name + ".yaml");
  if (path_or_name.find('/') == std::string::npos && !ends_with(path_or_name, ".weights") &&
      fs::is_regular_file(shipped, ec))
    return load_model_yaml(shipped);
  std::string list;
  for (const auto& n : shipped_models()) list += (list.empty() ? "" : ", ") + n;
  throw Error("--model: '" + path_or_name +
              "' is neither a HF config.json, an existing .yaml file nor a shipped model (shipped: " +
              (list.empty() ? std::string("none found in ") + config_path("models") : list) + ")");
}

void set_model_field(ModelSpec& out, const std::string& key, const std::string& value) {
  // Work on a copy so a rejected override leaves `out` as it was.
  ModelSpec spec = out;
  static const char* kKeys[] = {"sliding_window",       "hidden_size",         "intermediate_size",
                                "num_attention_heads",  "num_key_value_heads", "head_dim",
                                "vocab_size",           "rms_norm_eps",        "rope.sliding.rotary_dims",
                                "rope.full.rotary_dims", "rope.sliding.theta", "rope.full.theta",
                                "layers.full_every"};
  // Read in 64 bits and range-checked before narrowing (model/limits.h bounds the sizes).
  auto as_int = [&](int64_t min, int64_t max) {
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != value.size())
      throw Error("--set-model " + key + ": must be an integer, got '" + value + "'");
    if (v < min || v > max)
      throw Error("--set-model " + key + ": must be an integer in [" + std::to_string(min) + ", " +
                  std::to_string(max) + "], got " + value);
    return static_cast<int>(v);
  };
  auto as_double = [&]() {
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != value.size()) throw Error(key + ": must be a number, got '" + value + "'");
    return v;
  };
  if (key == "sliding_window") {
    if (spec.count(LayerType::kSliding) == 0)
      throw Error(key + ": " + spec.name + " has no sliding layers, so it has no window to set");
    spec.sliding_window = as_int(2, limits::kMaxContext);
  } else if (key == "hidden_size") spec.hidden = as_int(1, limits::kMaxHidden);
  else if (key == "intermediate_size") spec.intermediate = as_int(1, limits::kMaxIntermediate);
  else if (key == "num_attention_heads") spec.heads = as_int(1, limits::kMaxHeads);
  else if (key == "num_key_value_heads") spec.kv_heads = as_int(1, limits::kMaxHeads);
  else if (key == "head_dim") spec.head_dim = as_int(1, limits::kMaxHeadDim);
  else if (key == "vocab_size") spec.vocab = as_int(1, limits::kMaxVocab);
  else if (key == "rms_norm_eps") spec.rms_eps = as_double();
  else if (key == "rope.sliding.rotary_dims") spec.rope_sliding.rotary_dims = as_int(0, limits::kMaxHeadDim);
  else if (key == "rope.full.rotary_dims") spec.rope_full.rotary_dims = as_int(0, limits::kMaxHeadDim);
  else if (key == "rope.sliding.theta") spec.rope_sliding.theta = as_double();
  else if (key == "rope.full.theta") spec.rope_full.theta = as_double();
  else if (key == "layers.full_every") {
    int n = as_int(1, limits::kMaxLayers);
    if (!spec.sliding_window)
      throw Error(key + ": " + spec.name + " has no sliding window; layers.full_every needs one");
    for (int i = 0; i < spec.num_layers(); ++i)
      spec.layer_types[i] = (i + 1) % n == 0 ? LayerType::kFull : LayerType::kSliding;
  } else {
    std::string allowed;
    for (const char* k : kKeys) allowed += (allowed.empty() ? "" : ", ") + std::string(k);
    throw Error(key + ": unknown model field (allowed: " + allowed + ")");
  }
  // Re-check the cross-field rules on the changed spec.
  spec.validate();
  out = std::move(spec);
}

}  // namespace layoutx::model
