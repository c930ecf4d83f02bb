#include "costmodel/public_records.h"

#include <set>

#include "support/error.h"
#include "support/paths.h"
#include "support/yaml_reader.h"

namespace layoutx::costmodel {

namespace {

// Words the file gives instead of a value.
bool is_word(const std::string& s) { return s == "unknown" || s == "unverified" || s == "not_applicable"; }

template <typename T>
bool decode(const YAML::Node& n, T& out) {
  return n.IsScalar() && YAML::convert<T>::decode(n, out);
}

// A field that holds a T or one of the words (any other text too when `text_ok`: the file
// writes some unknowns as sentences, e.g. "unknown (window 512 < context 1024; ...)").
template <typename T>
Stated<T> stated(MapReader& m, const std::string& key, bool required, bool text_ok = false) {
  Stated<T> s;
  YAML::Node n = m.child(key, required);
  if (!n.IsDefined() || n.IsNull()) return s;
  T v{};
  if constexpr (std::is_same_v<T, bool>) {
    if (n.IsScalar() && (n.Scalar() == "true" || n.Scalar() == "false")) {
      s.value = n.Scalar() == "true";
      return s;
    }
  } else if (decode(n, v)) {
    s.value = v;
    return s;
  }
  if (n.IsScalar() && (is_word(n.Scalar()) || text_ok)) {
    s.word = n.Scalar();
    return s;
  }
  m.error(key, "expected a value or unknown / unverified / not_applicable, got " +
                   (n.IsScalar() ? "'" + n.Scalar() + "'" : std::string("a collection")));
  return s;
}

// A string out of a closed vocabulary (plus `unknown`).
std::string word_of(MapReader& m, const std::string& key, const std::set<std::string>& allowed) {
  const std::string s = m.string(key, true).value_or("");
  if (!s.empty() && !allowed.count(s) && s != "unknown") {
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    m.error(key, "'" + s + "' is not one of " + list + ", unknown");
  }
  return s;
}

template <typename E>
E enum_of(MapReader& m, const std::string& key, const std::vector<std::pair<const char*, E>>& table, E fallback) {
  const std::string s = m.string(key, true).value_or("");
  for (const auto& [name, e] : table)
    if (s == name) return e;
  if (!s.empty()) {
    std::string list;
    for (const auto& [name, e] : table) list += (list.empty() ? "" : ", ") + std::string(name);
    m.error(key, "'" + s + "' is not one of " + list);
  }
  return fallback;
}

const std::vector<std::pair<const char*, PublicKind>> kKinds = {
    {"decode_rate", PublicKind::kDecodeRate}, {"decode_floor", PublicKind::kDecodeFloor},
    {"graph_time", PublicKind::kGraphTime},   {"op_cycles", PublicKind::kOpCycles},
    {"op_counts", PublicKind::kOpCounts},     {"kernel_time", PublicKind::kKernelTime}};
const std::vector<std::pair<const char*, PublicUse>> kUses = {
    {"calibration", PublicUse::kCalibration}, {"calibration_inequality", PublicUse::kInequality},
    {"suspect", PublicUse::kSuspect},         {"shape_only", PublicUse::kShapeOnly},
    {"op_level", PublicUse::kOpLevel},        {"sanity_only", PublicUse::kSanityOnly}};
const std::vector<std::pair<const char*, PublicIncludes>> kIncludes = {
    {"graph_execute_only", PublicIncludes::kGraphExecuteOnly},
    {"runner_decode_incl_host", PublicIncludes::kRunnerDecodeInclHost},
    {"runner_end_to_end_incl_host", PublicIncludes::kRunnerEndToEnd},
    {"includes_prefill", PublicIncludes::kIncludesPrefill},
    {"app_end_to_end", PublicIncludes::kAppEndToEnd},
    {"runtime_benchmark", PublicIncludes::kRuntimeBenchmark},
    {"kernel_only", PublicIncludes::kKernelOnly},
    {"not_time", PublicIncludes::kNotTime}};

template <typename E>
const char* name_of(const std::vector<std::pair<const char*, E>>& table, E e) {
  for (const auto& [name, x] : table)
    if (x == e) return name;
  return "?";
}

// `m.key` as a map read by `read` (which calls finish on its reader).
template <typename F>
void nested(MapReader& m, const std::string& key, bool required, ErrorList& errors, F&& read) {
  YAML::Node n = m.child(key, required);
  if (!n.IsDefined() || n.IsNull()) return;
  MapReader c(m.file(), n, m.key_path(key), errors);
  if (!c.ok()) return;
  read(c);
  c.finish();
}

PublicLayout read_layout(MapReader& m, ErrorList& errors) {
  PublicLayout l;
  l.exporter = m.string("exporter", true).value_or("");
  for (const char* text : {"exporter_detail", "kv_detail", "kv_dtype_is", "context_length_is", "recipe", "runtime_config",
                           "compile_options", "attention_sink"})
    m.allow(text);
  nested(m, "graphs", true, errors, [&](MapReader& g) {
    l.graphs = stated<int>(g, "count", true);
    g.allow("detail");
    l.this_record = g.string("this_record", false).value_or("");
  });
  nested(m, "kv", true, errors, [&](MapReader& kv) {
    l.kv_dtype = word_of(kv, "dtype", {"u8", "u16"});
    l.kv_io = word_of(kv, "io", {"one_tensor_per_layer", "per_head", "per_kv_head", "in_graph"});
    l.k_transposed = stated<bool>(kv, "k_transposed", true);
    l.kv_update = word_of(kv, "update", {"smart_mask", "shift_pointer", "in_graph"});
    l.new_entries_only = stated<bool>(kv, "new_entries_only_output", true);
  });
  nested(m, "weights", true, errors, [&](MapReader& w) {
    l.weight_bits = stated<int>(w, "bits", true);
    l.granularity = word_of(w, "granularity", {"per_channel", "block"});
    l.block_size = stated<int>(w, "block_size", false, true);
    w.allow("block_size_is");
  });
  l.activation_bits = stated<int>(m, "activations_bits", true);
  l.lm_head_bits = stated<int>(m, "lm_head_bits", true);
  YAML::Node ex = m.child("exceptions", true);
  if (ex.IsDefined() && !ex.IsNull()) {
    if (!ex.IsSequence()) m.error("exceptions", "must be a list");
    else
      for (const auto& e : ex) l.exceptions.push_back(e.IsScalar() ? e.Scalar() : "");
  }
  nested(m, "attention", true, errors, [&](MapReader& a) {
    l.attention_form = word_of(a, "form", {"sha", "mha"});
    l.masked_softmax = stated<bool>(a, "masked_softmax", true);
    a.allow("form_is");
  });
  const YAML::Node sw = m.child("sliding_window", true);
  l.sliding_window = sw.IsScalar() ? sw.Scalar() : "";
  l.context_length = stated<int>(m, "context_length", true);
  if (const YAML::Node ar = m.child("ar", true); ar.IsScalar() && is_word(ar.Scalar()))  // `ar: unknown`
    l.ar_decode.word = ar.Scalar();
  else
    nested(m, "ar", true, errors, [&](MapReader& ar) {
    l.ar_decode = stated<int>(ar, "decode", false);
    l.ar_this_graph = stated<int>(ar, "this_graph", false);
    ar.allow("prefill");
    ar.allow("mode");
  });
  m.allow("spinquant_r3");
  return l;
}

PublicRecord read_record(const std::string& file, const YAML::Node& n, size_t index, ErrorList& errors) {
  PublicRecord r;
  r.where = where(file, n);
  MapReader m(file, n, "measurements[" + std::to_string(index) + "]", errors);
  if (!m.ok()) return r;
  r.key = m.string("key", true).value_or("");
  r.id = m.string("id", true).value_or("");
  r.kind = enum_of(m, "kind", kKinds, PublicKind::kDecodeRate);
  r.use = enum_of(m, "use", kUses, PublicUse::kSanityOnly);
  r.model = m.string("model", true).value_or("");
  r.chip = m.string("chip", true).value_or("");
  r.device = m.string("device", true).value_or("");
  r.runtime = m.string("runtime", true).value_or("");
  r.qairt_version = m.string("qairt_version", true).value_or("");
  nested(m, "layout", true, errors, [&](MapReader& l) { r.layout = read_layout(l, errors); });
  nested(m, "figure", true, errors, [&](MapReader& f) {
    r.tokens_per_s = f.number("tokens_per_s", false, 0);
    r.ms_per_token = f.number("ms_per_token", false, 0);
    r.ms_per_graph = f.number("ms_per_graph", false, 0);
    r.tokens_per_s_at_least = f.number("tokens_per_s_at_least", false, 0);
    r.ms_per_op = f.number("ms_per_op", false, 0);
    f.allow("thread_aggregate_cycles");
  });
  // A figure is a positive number (a rate of 0 has no time).
  const std::pair<const char*, std::optional<double>*> figures[] = {
      {"tokens_per_s", &r.tokens_per_s}, {"ms_per_token", &r.ms_per_token}, {"ms_per_graph", &r.ms_per_graph},
      {"tokens_per_s_at_least", &r.tokens_per_s_at_least}, {"ms_per_op", &r.ms_per_op}};
  for (const auto& [k, v] : figures)
    if (*v && **v <= 0) {
      m.error("figure", std::string(k) + " must be above 0, got " + std::to_string(**v));
      v->reset();
    }
  // The figure the kind needs.
  const bool has_time = r.tokens_per_s || r.ms_per_token;
  if (r.kind == PublicKind::kDecodeRate && !has_time) m.error("figure", "a decode_rate needs tokens_per_s or ms_per_token");
  if (r.kind == PublicKind::kDecodeFloor && !r.tokens_per_s_at_least)
    m.error("figure", "a decode_floor needs tokens_per_s_at_least");
  if (r.kind == PublicKind::kGraphTime && !r.ms_per_graph) m.error("figure", "a graph_time needs ms_per_graph");
  if (r.tokens_per_s && r.ms_per_token && std::abs(1000.0 / *r.tokens_per_s - *r.ms_per_token) > 0.02 * *r.ms_per_token)
    m.error("figure", "tokens_per_s and ms_per_token disagree by more than 2%");
  r.includes = enum_of(m, "includes", kIncludes, PublicIncludes::kNotTime);
  r.rel_sd = stated<double>(m, "rel_sd", true);
  r.confidence = m.string("confidence", true).value_or("");
  nested(m, "source", true, errors, [&](MapReader& s) {
    const auto part = [&](const char* k, const char* prefix) {  // "repo@commit PR #1 path"
      if (auto v = s.string(k, false))
        r.cited += (r.cited.empty() || *prefix == '@' ? "" : " ") + std::string(prefix) + *v;
    };
    part("repo", "");
    part("commit", "@");
    part("tag", "tag ");
    part("pr", "PR ");
    part("issue", "issue ");
    part("index_id", "public index ");
    part("path", "");
    for (const char* text : {"layout_read_in", "note", "what"}) s.allow(text);
  });
  for (const char* text : {"published_as", "includes_detail", "rel_sd_basis", "related", "notes", "ops"}) m.allow(text);
  m.finish();
  return r;
}

PublicChip read_chip(const std::string& file, const std::string& key, const YAML::Node& n, ErrorList& errors) {
  PublicChip c;
  c.key = key;
  c.where = where(file, n);
  MapReader m(file, n, "chips." + key, errors);
  if (!m.ok()) return c;
  c.name = m.string("name", true).value_or("");
  c.htp_arch = m.string("htp_arch", true).value_or("");
  c.vtcm_mb = stated<double>(m, "vtcm_mb", true);
  c.dram = m.string("dram", true).value_or("");
  // One peak, or one per variant (x2_elite: the standard and the Extreme): the lower is kept.
  YAML::Node peak = m.child("dram_peak_gbps", true);
  if (peak.IsMap()) {
    for (auto it = peak.begin(); it != peak.end(); ++it) {
      double v = 0;
      if (!decode(it->second, v)) m.error("dram_peak_gbps", "each variant's peak must be a number");
      else if (!c.dram_peak_gbps.value || v < *c.dram_peak_gbps.value) c.dram_peak_gbps.value = v;
    }
  } else {
    double v = 0;
    if (decode(peak, v)) c.dram_peak_gbps.value = v;
    else if (peak.IsScalar() && is_word(peak.Scalar())) c.dram_peak_gbps.word = peak.Scalar();
    else m.error("dram_peak_gbps", "expected a number, a map of variants, or unknown / unverified");
  }
  YAML::Node sources = m.child("sources", true);
  if (sources.IsMap())
    for (auto it = sources.begin(); it != sources.end(); ++it)
      if (it->second.IsScalar())
        c.source += (c.source.empty() ? "" : "; ") + it->first.Scalar() + ": " + it->second.Scalar();
  for (const char* text : {"confidence", "dram_peak_gbps_is", "codename"}) m.allow(text);
  m.finish();
  return c;
}

PublicModel read_model(const std::string& file, const std::string& key, const YAML::Node& n, ErrorList& errors) {
  PublicModel p;
  p.key = key;
  p.where = where(file, n);
  MapReader m(file, n, "models." + key, errors);
  if (!m.ok()) return p;
  p.hf_repo = m.string("hf_repo", true).value_or("");
  auto positive = [&](const char* k) { return static_cast<int>(m.integer(k, true, 1, 1 << 24).value_or(0)); };
  p.layers = positive("layers");
  p.hidden = positive("hidden");
  p.intermediate = positive("intermediate");
  p.heads = positive("heads");
  p.kv_heads = positive("kv_heads");
  p.head_dim = positive("head_dim");
  p.vocab = positive("vocab");
  p.tied_embeddings = stated<bool>(m, "tied_embeddings", true);
  p.activation = m.string("activation", true).value_or("");
  p.qkv_bias = m.boolean("qkv_bias", false).value_or(false);
  p.qk_norm = m.boolean("qk_norm", false).value_or(false);
  p.params = stated<double>(m, "params", true);
  YAML::Node sw = m.child("sliding_window", true);
  if (sw.IsScalar()) {
    p.sliding_window = sw.Scalar();
  } else if (sw.IsMap()) {
    MapReader w(file, sw, m.key_path("sliding_window"), errors);
    p.window = static_cast<int>(w.integer("window", true, 2, 1 << 24).value_or(0));
    p.sliding_window = "window " + std::to_string(*p.window) + ": " + w.string("pattern", true).value_or("");
    w.finish();
  }
  for (const char* text : {"params_is", "sources", "confidence", "params_layers_only", "no_rope_layer_interval",
                           "partial_rotary_factor", "attn_logit_softcapping", "final_logit_softcapping", "other",
                           "kv_heads_is"})
    m.allow(text);
  m.finish();
  return p;
}

}  // namespace

const char* to_string(PublicKind k) { return name_of(kKinds, k); }
const char* to_string(PublicUse u) { return name_of(kUses, u); }
const char* to_string(PublicIncludes i) { return name_of(kIncludes, i); }

std::optional<double> PublicRecord::ms_token() const {
  if (ms_per_token) return *ms_per_token;
  if (tokens_per_s && *tokens_per_s > 0) return 1000.0 / *tokens_per_s;
  return std::nullopt;
}

PublicTimings read_public_timings(const std::string& path) {
  const YAML::Node doc = load_yaml_file(path);
  ErrorList errors;
  PublicTimings t;
  t.path = path;
  MapReader top(path, doc, "", errors);
  if (!top.ok()) {
    errors.throw_if_any();
    throw Error(path + ": expected a map at the top");
  }
  if (auto v = top.integer("schema_version", true); v && *v != 1)
    top.error("schema_version", "layoutx reads schema_version 1, got " + std::to_string(*v));
  for (const char* text : {"snapshots", "vocabulary", "facts"}) top.allow(text);
  YAML::Node chips = top.child("chips", true);
  if (chips.IsMap())
    for (auto it = chips.begin(); it != chips.end(); ++it)
      t.chips[it->first.Scalar()] = read_chip(path, it->first.Scalar(), it->second, errors);
  YAML::Node models = top.child("models", true);
  if (models.IsMap())
    for (auto it = models.begin(); it != models.end(); ++it)
      t.models[it->first.Scalar()] = read_model(path, it->first.Scalar(), it->second, errors);
  YAML::Node records = top.child("measurements", true);
  if (records.IsDefined() && !records.IsSequence()) top.error("measurements", "must be a list");
  std::set<std::string> keys;
  if (records.IsSequence())
    for (size_t i = 0; i < records.size(); ++i) {
      PublicRecord r = read_record(path, records[i], i, errors);
      if (!r.key.empty() && !keys.insert(r.key).second) errors.add(r.where + ": key '" + r.key + "' is not unique");
      // A record's model and chip are the file's own (or not_applicable / unknown).
      if (!r.model.empty() && !is_word(r.model) && !t.models.count(r.model))
        errors.add(r.where + ": model: '" + r.model + "' is not in the file's models");
      if (!r.chip.empty() && !is_word(r.chip) && !t.chips.count(r.chip))
        errors.add(r.where + ": chip: '" + r.chip + "' is not in the file's chips");
      t.records.push_back(std::move(r));
    }
  top.finish();
  errors.throw_if_any();
  return t;
}

std::string shipped_public_timings() { return config_path("public/public-snapdragon-timings.yaml"); }

}  // namespace layoutx::costmodel
