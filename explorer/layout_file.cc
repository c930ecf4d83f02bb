#include "model/design_space.h"
#include "explorer/layout_file.h"

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "explorer/whole_step.h"
#include "model/model_loader.h"
#include "support/atomic_file.h"
#include "support/error.h"
#include "support/yaml_reader.h"

namespace layoutx::explorer {

LayoutFile make_layout_file(Evaluator& ev, const model::ModelSpec& model, int ctx, const Assignment& chosen,
                            bool allow_untested) {
  LayoutFile f;
  f.allow_untested = allow_untested;
  f.model = model.name;
  f.activation = model.activation;
  f.device = ev.predictor().device();
  f.calibration_id = ev.predictor().calibration_id();
  f.precision = chosen.begin()->second.precision();
  f.context = ctx;
  for (model::LayerType t : model.layer_types) {
    const model::Variant& v = chosen.at(t);
    model::LayerSpec spec = model.layer(t, ctx);
    // The file keeps the layout as given; its times are of the form priced in its place when a
    // value is not priced yet (DesignSpace::priced_representative), its legality the form's own.
    std::vector<std::string> unpriced;
    const Evaluation& priced = ev.evaluate(spec, model::design_space().priced_representative(v, unpriced));
    const Evaluation& e = ev.evaluate(spec, v);
    LayoutEntry entry{t, v, spec.cache_entries, priced.prediction.latency_ms, priced.prediction.low_ms,
                      priced.prediction.high_ms, costmodel::to_string(e.prediction.legality.compiles)};
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

void emit_axes(YAML::Emitter& y, const model::Variant& v, model::Activation act) {
  model::AxisScope scope;
  scope.activation = act;
  y << YAML::Key << "axes" << YAML::Value << YAML::Flow << YAML::BeginMap;
  for (const auto& [axis, value] : model::design_space().spelled(v, &scope)) y << YAML::Key << axis << YAML::Value << value;
  y << YAML::EndMap;
}

void emit_entry(YAML::Emitter& y, const LayoutEntry& e, bool with_type, model::Activation act) {
  model::AxisScope scope;  // preset and key relative to the model (ring on Gemma is ring with gelu=tanh)
  scope.activation = act;
  const std::string preset = e.variant.preset(scope);
  if (with_type) y << YAML::Key << "type" << YAML::Value << model::to_string(e.type);
  y << YAML::Key << "preset" << YAML::Value << (preset.empty() ? "~" : preset);
  y << YAML::Key << "variant_key" << YAML::Value << e.variant.key(scope);
  emit_axes(y, e.variant, act);
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
    emit_entry(y, e, false, f.activation);
    y << YAML::EndMap;
  }
  y << YAML::EndMap;
  y << YAML::Key << "layers" << YAML::Value << YAML::BeginSeq;
  for (size_t i = 0; i < f.layers.size(); ++i) {
    y << YAML::Flow << YAML::BeginMap << YAML::Key << "index" << YAML::Value << static_cast<int>(i);
    emit_entry(y, f.layers[i], true, f.activation);
    y << YAML::EndMap;
  }
  y << YAML::EndSeq;
  if (f.whole_model) {
    const WholeModelRecord& w = *f.whole_model;
    y << YAML::Key << "model_layout" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "layers_per_part" << YAML::Value << w.layers_per_part;
    y << YAML::Key << "embed_in_first_part" << YAML::Value << w.embed_in_first;
    y << YAML::Key << "head_in_last_part" << YAML::Value << w.head_in_last;
    y << YAML::Key << "head_precision" << YAML::Value << model::to_string(w.head_precision);
    y << YAML::Key << "kv_update" << YAML::Value << to_string(w.kv_update);
    y << YAML::Key << "scope" << YAML::Value << to_string(w.scope);
    y << YAML::Key << "ms_per_token" << YAML::Value << round6(w.ms_per_token);
    y << YAML::Key << "tokens_per_s" << YAML::Value << round6(w.tokens_per_s);
    y << YAML::Key << "parts" << YAML::Value << YAML::BeginSeq;
    for (const auto& p : w.parts) {
      y << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << p.name;
      y << YAML::Key << "layers" << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (int i : p.layers) y << i;
      y << YAML::EndSeq;
      y << YAML::Key << "embed" << YAML::Value << p.embed << YAML::Key << "head" << YAML::Value << p.head;
      y << YAML::Key << "weight_bytes" << YAML::Value << static_cast<long long>(p.weight_bytes);
      y << YAML::Key << "predicted_ms" << YAML::Value << round6(p.predicted_ms) << YAML::EndMap;
    }
    y << YAML::EndSeq << YAML::EndMap;
  }
  y << YAML::EndMap;
  return std::string("# layoutx layout file: the layout of every decode-step layer, for the exporter.\n"
                     "# Schema: README.md, \"The layout file\". Times are predicted ms per layer per token.\n") +
         y.c_str() + "\n";
}

void write_layout_file(const LayoutFile& f, const std::string& path) {
  // A unique temporary file, fsync, rename: a reader never sees half a file, even with
  // concurrent writers of one path.
  write_file_atomically(path, layout_file_yaml(f));
}

model::ModelSpec layout_file_model(const LayoutFile& f, const std::string& path) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  for (const char* ext : {".yaml", ".json"}) {
    const std::filesystem::path beside = dir / (f.model + ext);
    if (std::filesystem::exists(beside)) {
      model::ModelSpec m = model::load_model(beside.string());
      if (m.name != f.model)
        throw Error(path + ": model: '" + f.model + "', but the spec beside it (" + beside.string() + ") is '" + m.name + "'");
      return m;
    }
  }
  try {
    return model::load_model(f.model);
  } catch (const Error& e) {
    throw Error(path + ": model: '" + f.model + "' is neither beside the file (" + (dir / (f.model + ".yaml")).string() +
                ", .json) nor a shipped model: " + e.what());
  }
}

}  // namespace layoutx::explorer
