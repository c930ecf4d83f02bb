// Our measurement YAML as a Profile: the records model/measurement_file.h reads (the one
// reader of the format), stored as written. The shared data's looser records are admitted: no
// id, `context: unstated`, a share described in words (`op`), `layer: any`.
#include "model/measurement_file.h"
#include "db/profile.h"
#include "support/yaml_reader.h"

namespace layoutx::db {

Profile parse_measurement_yaml(std::string_view text, const std::string& name) {
  ErrorList errors;
  const model::MeasurementDocument doc =
      model::read_measurement_document(load_yaml_text(std::string(text), name), name, {}, errors);
  errors.throw_if_any();
  Profile prof;
  prof.format = Format::kYaml;
  prof.tool = "layoutx-measurements";
  prof.boundary = "ours";
  prof.device = doc.device_id;
  prof.device_description = doc.device_description;
  if (doc.runtime.find("AI Hub") != std::string::npos) prof.tool_version = doc.runtime;
  if (doc.version) prof.tool_version = "measurements v" + std::to_string(*doc.version);
  prof.notes = doc.notes;
  // The fit's noise assumptions belong to the cost model; kept as notes.
  auto note = [&](const char* key, const std::optional<double>& v) {
    if (v) prof.notes += (prof.notes.empty() ? "" : "; ") + std::string("noise.") + key + " " + std::to_string(*v);
  };
  note("timing_rel_sd", doc.timing_rel_sd);
  note("share_sd", doc.share_sd);

  for (const model::TimingEntry& t : doc.timings) {
    LayerRecord rec;
    rec.line = t.line;
    rec.model = doc.model;
    rec.layer_type = t.layer;
    rec.variant_key = t.variant.variant.key();
    rec.cache_entries = t.cache_entries;
    rec.ctx = t.context;
    if (!rec.ctx && rec.cache_entries) rec.ctx = *rec.cache_entries + 1;  // the smallest context with that cache
    if (rec.ctx && !rec.cache_entries && rec.layer_type == "full") rec.cache_entries = *rec.ctx - 1;
    rec.ms = t.ms;
    rec.samples = t.samples;
    prof.layers.push_back(rec);
  }
  for (const model::ShareEntry& s : doc.shares) {
    ShareRecord rec;
    rec.model = doc.model;
    rec.layer_type = s.layer;
    rec.ctx = s.context;
    rec.selector = s.variant.selector;
    if (!s.ops.empty()) {
      for (const std::string& o : s.ops) rec.op += (rec.op.empty() ? "" : ", ") + o;
    } else {
      rec.op = s.op;
    }
    rec.share_min = s.share_min;
    rec.share_max = s.share_max;
    prof.shares.push_back(rec);
  }
  for (const model::CompileEntry& c : doc.compiles)
    prof.compiles.push_back({c.precision, c.form, c.variant_key, c.result, c.exit_code, c.message});
  prof.warnings = doc.warnings;
  return prof;
}

}  // namespace layoutx::db
