#include "explorer/layout_file.h"

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "explorer/whole_step.h"
#include "support/atomic_file.h"
#include "support/error.h"
#include "support/yaml_reader.h"

namespace layoutx::explorer {

LayoutFile make_layout_file(Evaluator& ev, const model::ModelSpec& model, int ctx, const Assignment& chosen,
                            bool allow_untested) {
  LayoutFile f;
  f.allow_untested = allow_untested;
  f.model = model.name;
  f.device = ev.predictor().device();
  f.calibration_id = ev.predictor().calibration_id();
  f.precision = chosen.begin()->second.precision;
  f.context = ctx;
  for (model::LayerType t : model.layer_types) {
    const model::Variant& v = chosen.at(t);
    model::LayerSpec spec = model.layer(t, ctx);
    const Evaluation& e = ev.evaluate(spec, v);
    LayoutEntry entry{t, v, spec.cache_entries, e.prediction.latency_ms, e.prediction.low_ms, e.prediction.high_ms,
                      costmodel::to_string(e.prediction.legality.compiles)};
    f.defaults.emplace(t, entry);
    f.layers.push_back(entry);
    f.step_ms += entry.predicted_ms;
  }
  StepResult layers;
  layers.ms = f.step_ms;
  const WholeStep w = whole_step(ev.predictor(), model, layers, f.precision);
  f.whole_step_ms = w.ms;
  f.tokens_per_s = w.tokens_per_s;
  f.lm_head_ms = w.lm_head_ms;
  f.lm_head_share = w.lm_head_share;
  return f;
}

namespace {

// Six significant decimals: enough for ms predictions whose intervals are far wider.
double round6(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", v);
  return std::stod(buf);
}

void emit_axes(YAML::Emitter& y, const model::Variant& v) {
  y << YAML::Key << "axes" << YAML::Value << YAML::Flow << YAML::BeginMap;
  for (const auto& a : model::axis_names()) {
    if (v.join == model::Join::kKeys && (a == "new_score" || a == "new_value")) continue;
    y << YAML::Key << a << YAML::Value << model::axis_value(v, a);
  }
  y << YAML::EndMap;
}

void emit_entry(YAML::Emitter& y, const LayoutEntry& e, bool with_type) {
  if (with_type) y << YAML::Key << "type" << YAML::Value << model::to_string(e.type);
  y << YAML::Key << "preset" << YAML::Value << (e.variant.preset().empty() ? "~" : e.variant.preset());
  y << YAML::Key << "variant_key" << YAML::Value << e.variant.key();
  emit_axes(y, e.variant);
  y << YAML::Key << "cache_entries" << YAML::Value << e.cache_entries;
  y << YAML::Key << "predicted_ms" << YAML::Value << round6(e.predicted_ms);
  y << YAML::Key << "interval_ms" << YAML::Value << YAML::Flow << YAML::BeginSeq << round6(e.low_ms)
    << round6(e.high_ms) << YAML::EndSeq;
  if (!with_type) y << YAML::Key << "compiles" << YAML::Value << e.compiles;
}

}  // namespace

std::string layout_file_yaml(const LayoutFile& f) {
  YAML::Emitter y;
  y.SetDoublePrecision(6);
  y << YAML::BeginMap;
  y << YAML::Key << "schema" << YAML::Value << kLayoutSchema;
  y << YAML::Key << "model" << YAML::Value << f.model;
  y << YAML::Key << "device" << YAML::Value << f.device;
  y << YAML::Key << "calibration_id" << YAML::Value << f.calibration_id;
  y << YAML::Key << "precision" << YAML::Value << model::to_string(f.precision);
  y << YAML::Key << "context" << YAML::Value << f.context;
  y << YAML::Key << "step_ms" << YAML::Value << round6(f.step_ms);
  y << YAML::Key << "whole_step_ms" << YAML::Value << round6(f.whole_step_ms);
  y << YAML::Key << "tokens_per_s" << YAML::Value << round6(f.tokens_per_s);
  y << YAML::Key << "lm_head_ms" << YAML::Value << round6(f.lm_head_ms);
  y << YAML::Key << "lm_head_share" << YAML::Value << round6(f.lm_head_share);
  y << YAML::Key << "allow_untested" << YAML::Value << f.allow_untested;
  y << YAML::Key << "defaults" << YAML::Value << YAML::BeginMap;
  for (const auto& [t, e] : f.defaults) {
    y << YAML::Key << model::to_string(t) << YAML::Value << YAML::BeginMap;
    emit_entry(y, e, false);
    y << YAML::EndMap;
  }
  y << YAML::EndMap;
  y << YAML::Key << "layers" << YAML::Value << YAML::BeginSeq;
  for (size_t i = 0; i < f.layers.size(); ++i) {
    y << YAML::Flow << YAML::BeginMap << YAML::Key << "index" << YAML::Value << static_cast<int>(i);
    emit_entry(y, f.layers[i], true);
    y << YAML::EndMap;
  }
  y << YAML::EndSeq << YAML::EndMap;
  return std::string("# layoutx layout file: the layout of every decode-step layer, for the exporter.\n"
                     "# Schema: README.md, \"The layout file\". Times are predicted ms per layer per token.\n") +
         y.c_str() + "\n";
}

void write_layout_file(const LayoutFile& f, const std::string& path) {
  // A unique temporary file, fsync, rename: a reader never sees half a file, even with
  // concurrent writers of one path.
  write_file_atomically(path, layout_file_yaml(f));
}

namespace {

LayoutEntry read_entry(MapReader& r, ErrorList& errors, model::Precision p, bool with_type, model::LayerType type) {
  LayoutEntry e;
  e.type = type;
  if (with_type) {
    r.integer("index", true, 0);
    if (auto t = r.string("type", true)) {
      try {
        e.type = model::parse_layer_type(*t, r.at("type") + "type");
      } catch (const Error& err) {
        errors.add(err.what());
      }
    }
  }
  r.allow("preset");
  r.allow("axes");
  if (auto k = r.string("variant_key", true)) {
    try {
      e.variant = model::parse_variant(*k);
      if (e.variant.precision != p) r.error("variant_key", "precision differs from the file's precision");
    } catch (const Error& err) {
      r.error("variant_key", err.what());
    }
  }
  if (auto n = r.integer("cache_entries", true, 1)) e.cache_entries = static_cast<int>(*n);
  if (auto ms = r.number("predicted_ms", true, 0.0)) e.predicted_ms = *ms;
  if (auto c = r.string("compiles", false)) {
    if (*c == "yes" || *c == "unknown" || *c == "contested") e.compiles = *c;
    else r.error("compiles", "must be yes, unknown or contested, got '" + *c + "'");
  }
  YAML::Node iv = r.child("interval_ms", false);
  if (iv && iv.IsDefined() && iv.IsSequence() && iv.size() == 2) {
    e.low_ms = iv[0].as<double>();
    e.high_ms = iv[1].as<double>();
  }
  r.finish();
  return e;
}

}  // namespace

LayoutFile read_layout_file(const std::string& path) {
  YAML::Node root = load_yaml_file(path);
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
  if (auto c = r.integer("context", true, 2)) f.context = static_cast<int>(*c);
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
  r.finish();
  errors.throw_if_any();
  return f;
}

}  // namespace layoutx::explorer
