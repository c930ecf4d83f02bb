// Reading a layout file back (`layoutx emit --select`), in its own file so that the fuzz
// target of the reader links without the evaluator.
#include <yaml-cpp/yaml.h>

#include <cmath>

#include "explorer/layout_file.h"
#include "model/limits.h"
#include "support/error.h"
#include "model/design_space.h"
#include "support/paths.h"
#include "support/yaml_reader.h"

namespace layoutx::explorer {

namespace {

// `axes` restates the variant key axis by axis for scripts; an edited file whose axes and key
// disagree is inconsistent, and neither can be trusted, so it is an error.
void check_axes(MapReader& entry, const YAML::Node& axes, const model::Variant& v, ErrorList& errors) {
  if (!axes.IsDefined() || axes.IsNull()) return;
  MapReader a(entry.file(), axes, entry.key_path("axes"), errors);
  if (!a.ok()) return;
  // An axis the file does not spell (written before the axis existed) is the key's; one the
  // table does not know is an error (MapReader::finish).
  for (const auto& axis : model::design_space().axes()) {
    auto got = a.string(axis.name, false);
    const std::string want = model::design_space().value(v, axis.name);
    if (got && *got != want) a.error(axis.name, "'" + *got + "' disagrees with variant_key (" + axis.name + "=" + want + ")");
  }
  a.finish();
}

LayoutEntry read_entry(MapReader& r, ErrorList& errors, model::Precision p, bool with_type, model::LayerType type) {
  LayoutEntry e;
  e.type = type;
  if (with_type) {
    r.integer("index", true, 0, model::limits::kMaxLayers - 1);
    if (auto t = r.string("type", true)) {
      try {
        e.type = model::parse_layer_type(*t, r.at("type") + "type");
      } catch (const Error& err) {
        errors.add(err.what());
      }
    }
  }
  r.allow("preset");
  YAML::Node axes = r.child("axes", false);
  if (auto k = r.string("variant_key", true)) {
    try {
      e.variant = model::parse_variant(*k);
      if (e.variant.precision() != p) r.error("variant_key", "precision differs from the file's precision");
      check_axes(r, axes, e.variant, errors);
    } catch (const Error& err) {
      r.error("variant_key", err.what());
    }
  }
  if (auto n = r.integer("cache_entries", true, 1, model::limits::kMaxContext)) e.cache_entries = static_cast<int>(*n);
  if (auto ms = r.number("predicted_ms", true, 0.0)) e.predicted_ms = *ms;
  if (auto c = r.string("compiles", false)) {
    if (*c == "yes" || *c == "unknown" || *c == "contested") e.compiles = *c;
    else r.error("compiles", "must be yes, unknown or contested, got '" + *c + "'");
  }
  YAML::Node iv = r.child("interval_ms", false);
  if (iv.IsDefined() && !iv.IsNull()) {
    // [low, high] in ms, 0 <= low <= high; checked here (yaml-cpp's as<double> would throw
    // its own exception on a non-number).
    double lo = 0, hi = 0;
    bool ok = iv.IsSequence() && iv.size() == 2 && iv[0].IsScalar() && iv[1].IsScalar() &&
              YAML::convert<double>::decode(iv[0], lo) && YAML::convert<double>::decode(iv[1], hi) &&
              lo >= 0 && lo <= hi && std::isfinite(hi);
    if (ok) {
      e.low_ms = lo;
      e.high_ms = hi;
    } else {
      r.error("interval_ms", "must be [low, high] with finite numbers 0 <= low <= high (ms)");
    }
  }
  r.finish();
  return e;
}

// `model_layout:`: the model-level axes and the parts; each layer index in exactly one part, in
// order from 0 to the file's last layer.
WholeModelRecord read_whole_model(const std::string& path, const YAML::Node& node, size_t layers, ErrorList& errors) {
  WholeModelRecord w;
  MapReader r(path, node, "model_layout", errors);
  if (!r.ok()) return w;
  if (auto n = r.integer("layers_per_part", true, 1, model::limits::kMaxLayers)) w.layers_per_part = static_cast<int>(*n);
  w.embed_in_first = r.boolean("embed_in_first_part", true).value_or(false);
  w.head_in_last = r.boolean("head_in_last_part", true).value_or(false);
  if (auto p = r.string("head_precision", true)) {
    try {
      w.head_precision = model::parse_precision(*p);
    } catch (const Error& e) {
      r.error("head_precision", e.what());
    }
  }
  if (auto s = r.string("kv_update", true)) {
    if (*s == "in_place" || *s == "shift") w.kv_update = parse_kv_update(*s, "kv_update");
    else r.error("kv_update", "expected in_place or shift, got '" + *s + "'");
  }
  if (auto s = r.string("scope", true)) {
    if (*s == "runner" || *s == "graphs") w.scope = parse_step_scope(*s, "scope");
    else r.error("scope", "expected runner or graphs, got '" + *s + "'");
  }
  if (auto v = r.number("ms_per_token", false, 0.0)) w.ms_per_token = *v;
  if (auto v = r.number("tokens_per_s", false, 0.0)) w.tokens_per_s = *v;
  YAML::Node parts = r.child("parts", true);
  int next = 0;
  if (parts.IsDefined() && !parts.IsNull() && !parts.IsSequence()) r.error("parts", "must be a list of parts");
  for (size_t i = 0; parts.IsSequence() && i < parts.size(); ++i) {
    MapReader pr(path, parts[i], "model_layout.parts[" + std::to_string(i) + "]", errors);
    if (!pr.ok()) continue;
    WholeModelRecord::Part p;
    p.name = pr.string("name", true).value_or("");
    p.embed = pr.boolean("embed", true).value_or(false);
    p.head = pr.boolean("head", true).value_or(false);
    if (auto b = pr.number("weight_bytes", true, 0.0)) p.weight_bytes = *b;
    if (auto ms = pr.number("predicted_ms", true, 0.0)) p.predicted_ms = *ms;
    YAML::Node ls = pr.child("layers", true);
    if (ls.IsSequence()) {
      for (size_t k = 0; k < ls.size(); ++k) {
        int index = -1;
        if (!ls[k].IsScalar() || !YAML::convert<int>::decode(ls[k], index) || index != next) {
          pr.error("layers", "must continue the layers in order: expected " + std::to_string(next) + " at position " +
                                 std::to_string(k));
          break;
        }
        p.layers.push_back(index);
        ++next;
      }
    } else if (ls.IsDefined() && !ls.IsNull()) {
      pr.error("layers", "must be a list of layer indices");
    }
    pr.finish();
    w.parts.push_back(std::move(p));
  }
  if (parts.IsSequence() && static_cast<size_t>(next) != layers)
    r.error("parts", "hold layers 0-" + std::to_string(next - 1) + ", but the file has " + std::to_string(layers) + " layers");
  r.finish();
  return w;
}

}  // namespace

LayoutFile read_layout_file(const std::string& path) { return read_layout_file_text(read_text_file(path), path); }

LayoutFile read_layout_file_text(const std::string& text, const std::string& path) {
  YAML::Node root = load_yaml_text(text, path);
  ErrorList errors;
  MapReader r(path, root, "", errors);
  LayoutFile f;
  if (auto s = r.string("schema", true); s && *s != kLayoutSchema)
    r.error("schema", "expected " + std::string(kLayoutSchema) + ", got " + *s);
  f.model = r.string("model", true).value_or("");
  f.device = r.string("device", true).value_or("");
  f.calibration_id = r.string("calibration_id", false).value_or("");
  if (auto p = r.string("precision", true)) {
    try {
      f.precision = model::parse_precision(*p);
    } catch (const Error& e) {
      r.error("precision", e.what());
    }
  }
  if (auto c = r.integer("context", true, 2, model::limits::kMaxContext)) f.context = static_cast<int>(*c);
  if (auto s = r.number("step_ms", false, 0.0)) f.step_ms = *s;
  if (auto s = r.number("whole_step_ms", false, 0.0)) f.whole_step_ms = *s;
  if (auto s = r.number("tokens_per_s", false, 0.0)) f.tokens_per_s = *s;
  if (auto s = r.number("lm_head_ms", false, 0.0)) f.lm_head_ms = *s;
  if (auto s = r.number("lm_head_share", false, 0.0)) f.lm_head_share = *s;
  f.allow_untested = r.boolean("allow_untested", false).value_or(false);
  YAML::Node defaults = r.child("defaults", true);
  if (defaults.IsDefined() && !defaults.IsNull()) {
    MapReader d(path, defaults, "defaults", errors);
    for (auto t : {model::LayerType::kSliding, model::LayerType::kFull}) {
      YAML::Node n = d.child(model::to_string(t), false);
      if (!n.IsDefined() || n.IsNull()) continue;
      MapReader er(path, n, std::string("defaults.") + model::to_string(t), errors);
      f.defaults[t] = read_entry(er, errors, f.precision, false, t);
    }
    d.finish();
  }
  YAML::Node layers = r.child("layers", true);
  if (layers.IsDefined() && layers.IsSequence()) {
    for (size_t i = 0; i < layers.size(); ++i) {
      MapReader lr(path, layers[i], "layers[" + std::to_string(i) + "]", errors);
      f.layers.push_back(read_entry(lr, errors, f.precision, true, model::LayerType::kSliding));
    }
  }
  YAML::Node whole = r.child("model_layout", false);
  if (whole.IsDefined() && !whole.IsNull()) f.whole_model = read_whole_model(path, whole, f.layers.size(), errors);
  r.finish();
  errors.throw_if_any();
  return f;
}

}  // namespace layoutx::explorer
