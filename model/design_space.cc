#include "model/design_space.h"

#include <algorithm>

#include "model/variant.h"
#include "support/error.h"

namespace layoutx::model {

namespace {

std::string join_list(const std::vector<std::string>& v) {
  std::string r;
  for (const auto& s : v) r += (r.empty() ? "" : ", ") + s;
  return r;
}

int value_index(const Axis& a, std::string_view value) {
  auto it = std::find(a.values.begin(), a.values.end(), value);
  return it == a.values.end() ? -1 : static_cast<int>(it - a.values.begin());
}

bool is_gelu(Activation a) { return a == Activation::kGelu || a == Activation::kGeluTanh; }

// The model's own GELU form: tanh for gelu_pytorch_tanh checkpoints, erf otherwise.
int gelu_default(const AxisScope& m) {
  return m.activation == Activation::kGeluTanh ? static_cast<int>(GeluForm::kTanh) : static_cast<int>(GeluForm::kErf);
}

}  // namespace

DesignSpace::DesignSpace(std::vector<Axis> axes, std::vector<Preset> presets)
    : axes_(std::move(axes)), presets_(std::move(presets)) {
  static_assert(std::tuple_size_v<decltype(Variant::value)> == kMaxAxes);
  ErrorList e;
  if (axes_.size() > kMaxAxes) e.add("design space: " + std::to_string(axes_.size()) + " axes, at most " + std::to_string(kMaxAxes));
  for (size_t i = 0; i < axes_.size(); ++i) {
    const Axis& a = axes_[i];
    if (a.values.empty() || a.values.size() > 255) e.add("axis " + a.name + ": needs 1 to 255 values");
    for (size_t j = 0; j < i; ++j)
      if (axes_[j].name == a.name) e.add("axis " + a.name + ": listed twice");
    if (a.only_with_axis.empty()) continue;
    int k = find(a.only_with_axis);
    if (k < 0 || static_cast<size_t>(k) >= i) e.add("axis " + a.name + ": its condition names '" + a.only_with_axis + "', not an earlier axis");
    else
      for (const auto& v : a.only_with_values)
        if (value_index(axes_[static_cast<size_t>(k)], v) < 0) e.add("axis " + a.name + ": condition value '" + v + "' unknown");
  }
  for (const Preset& p : presets_)
    for (const auto& [axis, value] : p.values) {
      int k = find(axis);
      if (k < 0 || value_index(axes_[static_cast<size_t>(k)], value) < 0)
        e.add("preset " + p.name + ": " + axis + "=" + value + " is not in the table");
    }
  e.throw_if_any();
}

const DesignSpace& DesignSpace::shipped() {
  static const DesignSpace t = [] {
    std::vector<Axis> axes = {
        {.name = "returns", .values = {"window", "new_entry"},
         .meaning = "what a layer hands back each token: its whole updated cache (window), or only the new K/V "
                    "entry for the runtime to write into a ring slot or append (new_entry)"},
        {.name = "join", .values = {"keys", "scores"},
         .meaning = "where the new token meets the cache: concatenated onto the keys before one softmax (keys), or "
                    "scored apart and the score vectors concatenated (scores)"},
        {.name = "softmax", .values = {"fused", "explicit", "masked"},
         .meaning = "one Softmax op after the mask add, max/sub/exp/sum/div as separate ops, or QNN's "
                    "MaskedSoftmax (QNN 2.35+: the mask add folded into the softmax, finite mask values)"},
        {.name = "new_score", .values = {"matmul", "mul_reducesum"},
         .meaning = "the new token's own score q.k: a MatMul, or a broadcast Mul and a ReduceSum",
         .only_with_axis = "join", .only_with_values = {"scores"}},
        {.name = "new_value", .values = {"matmul", "broadcast_mul"},
         .meaning = "the new token's weighted value p.v: a MatMul, or a broadcast Mul",
         .only_with_axis = "join", .only_with_values = {"scores"}},
        {.name = "gelu", .values = {"erf", "tanh"},
         .meaning = "the GELU form: exact (erf) or the tanh approximation; GELU models only, default the model's own",
         .gelu_models_only = true, .model_default = gelu_default},
        {.name = "precision", .values = {"fp16", "w8a16", "w4a16"},
         .meaning = "weights / activations: fp16, 8-bit or 4-bit weights with 16-bit activations",
         .in_every_key = true, .layout_choice = false},
        // The exporters' forms (issue 34), priced by cost model 3 (costmodel/features.h: cache
        // bytes by dtype and the conversions they avoid, block scales, K's transpose).
        {.name = "kv_dtype", .values = {"f16", "u8", "u16"},
         .meaning = "the K/V caches' dtype at the graph boundary: f16 (converted inside a quantized graph each "
                    "step), u8 (8-bit symmetric, the new entry's quantizer tied to the cache's) or u16 (16-bit "
                    "fixed point)",
         .exporter_form = true},
        {.name = "k_layout", .values = {"transposed", "rows"},
         .meaning = "the K cache's layout: transposed [kv, head_dim, cache] (scores without a transpose; the new key "
                    "is written as a column) or rows [kv, cache, head_dim] (the scores MatMul transposes it)",
         .numerics_exact = true, .exporter_form = true},
        {.name = "weight_quant", .values = {"per_channel", "block16", "block32", "block64"},
         .meaning = "4-bit weights: per output channel, or block-wise along the input channels (LPBQ: 4-bit "
                    "integer block scales under a per-channel scale) in blocks of 16, 32 or 64",
         .only_with_axis = "precision", .only_with_values = {"w4a16"}, .exporter_form = true},
        {.name = "sliding_cache", .values = {"window", "context"},
         .meaning = "a sliding layer's cache: its window (window-1 slots) or a full-length one like a full layer's "
                    "(context-1 slots) with the mask hiding entries older than the window; full layers unchanged",
         .sliding_layers_only = true, .numerics_exact = true, .exporter_form = true},
        {.name = "heads", .values = {"grouped", "per_head"},
         .meaning = "attention heads: one op per tensor with heads as an axis (grouped), or one op chain per query "
                    "head (per_head: its own projection slices, RoPE, scores, softmax and weighted values, as "
                    "MHA-to-SHA passes produce)",
         .explored = false, .exporter_form = true},
        {.name = "projection", .values = {"matmul", "conv1x1"},
         .meaning = "each Linear as a MatMul, or as a 1x1 Conv2d on [1, C, 1, 1] activations with weights "
                    "[out, in, 1, 1] (the exporters' form)",
         .numerics_exact = true, .explored = false, .exporter_form = true},
    };
    std::vector<Preset> presets = {
        {"roll", {{"returns", "window"}, {"join", "keys"}}, "the window sliced and handed back whole each token"},
        {"ring", {{"returns", "new_entry"}, {"join", "keys"}}, "the new entry handed back for a ring slot"},
        {"score-join", {{"returns", "new_entry"}, {"join", "scores"}}, "the new entry, met in score space"},
    };
    DesignSpace d(std::move(axes), std::move(presets));
    // Variant's typed accessors are positions in this table.
    const std::pair<size_t, const char*> positions[] = {
        {kReturnsAxis, "returns"}, {kJoinAxis, "join"}, {kSoftmaxAxis, "softmax"}, {kNewScoreAxis, "new_score"},
        {kNewValueAxis, "new_value"}, {kGeluAxis, "gelu"}, {kPrecisionAxis, "precision"},
        {kKvDtypeAxis, "kv_dtype"}, {kKLayoutAxis, "k_layout"}, {kWeightQuantAxis, "weight_quant"},
        {kSlidingCacheAxis, "sliding_cache"}, {kHeadsAxis, "heads"}, {kProjectionAxis, "projection"}};
    for (const auto& [pos, name] : positions)
      if (d.find(name) != static_cast<int>(pos)) throw Error(std::string("design space: axis ") + name + " out of place");
    return d;
  }();
  return t;
}

DesignSpace DesignSpace::with_axis(Axis extra) const {
  auto axes = axes_;
  axes.push_back(std::move(extra));
  return DesignSpace(std::move(axes), presets_);
}

int DesignSpace::find(std::string_view name) const {
  for (size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i].name == name) return static_cast<int>(i);
  return -1;
}

std::vector<std::string> DesignSpace::exporter_axes() const {
  std::vector<std::string> out;
  for (const auto& a : axes_)
    if (a.exporter_form) out.push_back(a.name);
  return out;
}

size_t DesignSpace::axis_index(std::string_view name) const {
  int i = find(name);
  if (i < 0) {
    std::vector<std::string> names;
    for (const auto& a : axes_) names.push_back(a.name);
    throw Error("unknown axis '" + std::string(name) + "' (axes: " + join_list(names) + ")");
  }
  return static_cast<size_t>(i);
}

const std::string& DesignSpace::value(const Variant& v, size_t i) const {
  const Axis& a = axes_.at(i);
  size_t k = v.value[i];
  if (k >= a.values.size()) throw Error("axis " + a.name + ": value index " + std::to_string(k) + " out of range");
  return a.values[k];
}

void DesignSpace::set(Variant& v, std::string_view axis, std::string_view value) const {
  size_t i = axis_index(axis);
  int k = value_index(axes_[i], value);
  if (k < 0)
    throw Error(std::string(axis) + ": unknown value '" + std::string(value) + "' (allowed: " + join_list(axes_[i].values) + ")");
  v.value[i] = static_cast<std::uint8_t>(k);
}

std::vector<std::pair<std::string, std::string>> DesignSpace::spelled(const Variant& v, const AxisScope* m) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t i = 0; i < axes_.size(); ++i)
    if (applies(v, i) && (!m || applies_to(*m, i)) && (axes_[i].priced || v.value[i] != 0))
      out.emplace_back(axes_[i].name, value(v, i));
  return out;
}

bool DesignSpace::applies(const Variant& v, size_t i) const {
  const Axis& a = axes_[i];
  if (a.only_with_axis.empty()) return true;
  const std::string& other = value(v, axis_index(a.only_with_axis));
  return std::find(a.only_with_values.begin(), a.only_with_values.end(), other) != a.only_with_values.end();
}

bool DesignSpace::applies_to(const AxisScope& m, size_t i) const {
  return !axes_[i].gelu_models_only || is_gelu(m.activation);
}

std::string DesignSpace::key(const Variant& v, const AxisScope* m) const {
  const Variant own = defaults(v, m);  // the model's defaults (the table's without a model)
  std::string k;
  for (size_t i = 0; i < axes_.size(); ++i) {
    const bool at_default = v.value[i] == 0 && v.value[i] == own.value[i];
    if (!axes_[i].in_every_key && (at_default || !applies(v, i))) continue;
    if (!k.empty()) k += ',';
    k += axes_[i].name;
    k += '=';
    k += value(v, i);
  }
  return k;
}

Variant DesignSpace::parse(std::string_view preset_or_key, const std::vector<std::string>& sets,
                           const AxisScope* m) const {
  // Every axis the text leaves out is the model's own (the table default without a model).
  Variant v = defaults(Variant{}, m);
  if (preset_or_key.find('=') == std::string_view::npos) {
    v = preset(preset_or_key, v);
  } else {
    std::string_view rest = preset_or_key;
    std::vector<std::string_view> seen;  // a repeated axis would silently take the last value
    while (!rest.empty()) {
      auto comma = rest.find(',');
      std::string_view pair = rest.substr(0, comma);
      auto eq = pair.find('=');
      if (eq == std::string_view::npos) throw Error("variant key: '" + std::string(pair) + "' is not axis=value");
      if (std::find(seen.begin(), seen.end(), pair.substr(0, eq)) != seen.end())
        throw Error("variant key: axis '" + std::string(pair.substr(0, eq)) + "' is given twice in '" +
                    std::string(preset_or_key) + "'");
      seen.push_back(pair.substr(0, eq));
      set(v, pair.substr(0, eq), pair.substr(eq + 1));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  for (const auto& s : sets) {
    auto eq = s.find('=');
    if (eq == std::string::npos) throw Error("--set: '" + s + "' is not axis=value");
    set(v, std::string_view(s).substr(0, eq), std::string_view(s).substr(eq + 1));
  }
  if (m) validate_for(v, *m);
  else validate(v);
  return v;
}

void DesignSpace::validate(const Variant& v) const {
  ErrorList e;
  for (size_t i = 0; i < axes_.size(); ++i) {
    if (v.value[i] == 0 || applies(v, i)) continue;
    const Axis& a = axes_[i];
    e.add(a.name + "=" + value(v, i) + ": applies only with " + a.only_with_axis + "=" + join_list(a.only_with_values) +
          " (otherwise the op it chooses is not in the graph)");
  }
  for (size_t i = axes_.size(); i < kMaxAxes; ++i)
    if (v.value[i] != 0) e.add("variant: a value set past the table's " + std::to_string(axes_.size()) + " axes");
  e.throw_if_any();
}

void DesignSpace::validate_for(const Variant& v, const AxisScope& m) const {
  validate(v);
  ErrorList e;
  for (size_t i = 0; i < axes_.size(); ++i)
    if (!applies_to(m, i) && v.value[i] != 0)
      e.add(axes_[i].name + "=" + value(v, i) + ": " + (m.model.empty() ? std::string("this model") : m.model) + " has no " + axes_[i].name + " (its activation is " +
            to_string(m.activation) + ")");
  e.throw_if_any();
}

std::string DesignSpace::preset_of(const Variant& v, const AxisScope* m) const {
  const Variant base = defaults(v, m);
  for (const Preset& p : presets_)
    if (preset(p.name, base) == v) return p.name;
  return "";
}

Variant DesignSpace::preset(std::string_view name, const Variant& base) const {
  for (const Preset& p : presets_) {
    if (p.name != name) continue;
    Variant v = base;
    for (const auto& [axis, value] : p.values) set(v, axis, value);
    return v;
  }
  std::vector<std::string> names;
  for (const Preset& p : presets_) names.push_back(p.name);
  throw Error("layout: unknown preset '" + std::string(name) + "' (presets: " + join_list(names) +
              "; or a variant key such as 'returns=new_entry,join=keys,...')");
}

int DesignSpace::axis_changes(const Variant& from, const Variant& to) const {
  int n = 0;
  for (size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i].layout_choice && from.value[i] != to.value[i]) ++n;
  return n;
}

std::string DesignSpace::display_name(const Variant& v, const AxisScope* m) const {
  const Variant defaults_at = defaults(v, m);
  std::string best;
  int best_changes = 1 << 20;
  for (const Preset& p : presets_) {
    Variant base = preset(p.name, defaults_at);
    std::string s = p.name;
    int n = 0;
    for (size_t i = 0; i < axes_.size(); ++i) {
      if (!axes_[i].layout_choice || base.value[i] == v.value[i] || !applies(v, i)) continue;
      s += "+" + axes_[i].name + "=" + value(v, i);
      ++n;
    }
    if (n < best_changes) {
      best_changes = n;
      best = s;
    }
  }
  return best;
}

std::string DesignSpace::file_name(const Variant& v) const {
  std::string s;
  for (char c : display_name(v)) {
    if (c == '+') s += "__";
    else if (c == '-' || c == '=') s += '_';
    else s += c;
  }
  return s;
}

Variant DesignSpace::defaults_for(const AxisScope& m, const Variant& base) const {
  Variant v = base;
  for (size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i].layout_choice) v.value[i] = static_cast<std::uint8_t>(axes_[i].model_default && applies_to(m, i) ? axes_[i].model_default(m) : 0);
  return v;
}

Variant DesignSpace::defaults(const Variant& base, const AxisScope* m) const {
  if (m) return defaults_for(*m, base);
  Variant v = base;
  for (size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i].layout_choice) v.value[i] = 0;
  return v;
}

std::vector<Variant> DesignSpace::variants(const Variant& base, const AxisScope* m) const {
  // Odometer over the layout axes that apply to the model; the others stay at base's value
  // (precision) or their default. A combination where an axis that does not apply is off its
  // default is not a variant (it would duplicate the one at the default).
  std::vector<size_t> free;
  for (size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i].layout_choice && axes_[i].priced && axes_[i].explored && (!m || applies_to(*m, i)) &&
        !(axes_[i].sliding_layers_only && m && m->layer_type && *m->layer_type != LayerType::kSliding))
      free.push_back(i);
  Variant v = defaults(base, m);
  for (size_t i : free) v.value[i] = 0;
  std::vector<Variant> out;
  while (true) {
    bool meaningful = true;
    for (size_t i : free) meaningful = meaningful && (v.value[i] == 0 || applies(v, i)) && priced_value(i, v.value[i]);
    if (meaningful) out.push_back(v);
    size_t j = 0;
    while (j < free.size() && ++v.value[free[j]] == axes_[free[j]].values.size()) v.value[free[j++]] = 0;
    if (j == free.size()) break;
  }
  return out;
}

Variant DesignSpace::numerics_representative(const Variant& v) const {
  Variant r = v;
  for (size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i].numerics_exact) r.value[i] = 0;
  return r;
}

bool DesignSpace::priced_value(size_t i, size_t k) const {
  const Axis& a = axes_.at(i);
  if (!a.priced) return k == 0;
  return k >= a.values.size() ||
         std::find(a.unpriced_values.begin(), a.unpriced_values.end(), a.values[k]) == a.unpriced_values.end();
}

Variant DesignSpace::priced_representative(const Variant& v, std::vector<std::string>& notes) const {
  Variant out = v;
  for (size_t i = 0; i < axes_.size(); ++i)
    if (!priced_value(i, out.value[i])) {
      notes.push_back(axes_[i].name + "=" + value(out, i) + " is not priced yet: priced as " + axes_[i].name + "=" +
                      axes_[i].values[0]);
      out.value[i] = 0;
    }
  return out;
}

void DesignSpace::require_priced(const Variant& v, const std::string& what) const {
  ErrorList e;
  for (size_t i = 0; i < axes_.size(); ++i)
    if (!priced_value(i, v.value[i]))
      e.add(what + ": " + axes_[i].name + "=" + value(v, i) + ": not priced yet: " +
            (axes_[i].priced_by.empty() ? std::string("no cost model prices it") : axes_[i].priced_by) +
            " (graph, parity and emit accept it; predict, step, select and whatif price only its priced values, e.g. " +
            axes_[i].name + "=" + axes_[i].values[0] + ")");
  e.throw_if_any();
}

}  // namespace layoutx::model
