#include "costmodel/measurements.h"

#include <cstdio>
#include <map>
#include <set>

#include "costmodel/lowering.h"
#include "model/builder.h"
#include "model/model_loader.h"
#include "support/error.h"
#include "support/yaml_reader.h"

namespace layoutx::costmodel {

const char* to_string(MeasurementRecord::Kind k) {
  switch (k) {
    case MeasurementRecord::Kind::kLayerTime: return "layer_time";
    case MeasurementRecord::Kind::kOpShare: return "op_share";
  }
  return "?";
}

model::LayerGraph build_graph(const MeasurementRecord& r) {
  static std::map<std::string, model::ModelSpec> cache;  // model specs by name, loaded once
  auto it = cache.find(r.model);
  if (it == cache.end()) it = cache.emplace(r.model, model::load_model(r.model)).first;
  return model::build_layer_graph(it->second.layer(r.layer, r.context), r.variant);
}

std::string graph_key(const MeasurementRecord& r) {
  model::LayerGraph g = build_graph(r);
  return r.model + "|" + model::to_string(r.layer) + "|" + std::to_string(g.layer.cache_entries) + "|" +
         r.variant.key();
}

namespace {

struct Defaults {
  double timing_rel_sd = 0.02;
  double share_sd = 0.005;
};

// Reads one record (a layer timing or a share) from map node `n`.
void read_record(const std::string& file, const YAML::Node& n, const std::string& path, MeasurementRecord::Kind kind,
                 const std::string& model_name, const Defaults& def, ErrorList& errors,
                 std::vector<MeasurementRecord>& out) {
  MapReader m(file, n, path, errors);
  if (!m.ok()) return;
  const size_t before = errors.messages().size();
  MeasurementRecord r;
  r.kind = kind;
  r.model = model_name;
  r.source = where(file, n);
  r.id = m.string("id", true).value_or("");
  if (auto s = m.string("layer", true)) {
    try {
      r.layer = model::parse_layer_type(*s, "layer");
    } catch (const Error& e) {
      m.error("layer", e.what());
    }
  }
  r.context = static_cast<int>(m.integer("context", true, 1, 1 << 24).value_or(4096));
  r.cache_entries = static_cast<int>(m.integer("cache_entries", false, 1, 1 << 24).value_or(0));
  YAML::Node v = m.child("variant", true);
  if (v.IsDefined() && !v.IsNull()) {
    if (!v.IsMap()) {
      m.error("variant", "must be a mapping of axis: value");
    } else {
      for (auto it = v.begin(); it != v.end(); ++it) {
        const std::string axis = it->first.Scalar();
        try {
          r.variant.set(axis, it->second.Scalar());
        } catch (const Error& e) {
          errors.add(where(file, it->first) + ": " + m.key_path("variant." + axis) + ": " + e.what());
        }
      }
      try {
        r.variant.validate();
      } catch (const Error& e) {
        m.error("variant", e.what());
      }
    }
  }
  if (kind == MeasurementRecord::Kind::kLayerTime) {
    // A latency must be positive: a zero or negative time is a transcription error.
    r.ms = m.number("ms", true, 1e-9).value_or(0);
    r.sd = def.timing_rel_sd;
  } else {
    YAML::Node ops = m.child("ops", true);
    if (ops.IsDefined() && !ops.IsNull()) {
      if (!ops.IsSequence() || ops.size() == 0) m.error("ops", "must be a non-empty list of op name globs");
      else
        for (const auto& o : ops) r.ops.push_back(o.Scalar());
    }
    const bool point = m.has("share");
    const bool band = m.has("share_min") || m.has("share_max");
    if (point == band) {
      m.error("", "give either share, or share_min and share_max");
      m.allow("share");
      m.allow("share_min");
      m.allow("share_max");
    } else if (point) {
      r.share = m.number("share", true, 0.0, 1.0).value_or(0);
      r.sd = def.share_sd;
    } else {
      auto lo = m.number("share_min", true, 0.0, 1.0);
      auto hi = m.number("share_max", true, 0.0, 1.0);
      if (lo && hi) {
        if (*lo > *hi) m.error("share_min", "must not exceed share_max");
        // A band is read as +-2 standard deviations around its midpoint.
        r.share = 0.5 * (*lo + *hi);
        r.sd = std::max(0.25 * (*hi - *lo), 1e-4);
      }
    }
  }
  m.finish();
  if (errors.messages().size() == before) out.push_back(r);
}

std::vector<MeasurementRecord> parse(const YAML::Node& root, const std::string& file) {
  ErrorList errors;
  MapReader top(file, root, "", errors);
  top.integer("version", true, 1, 1);
  std::string model_name = top.string("model", true).value_or("");
  top.string("device", false);
  Defaults def;
  YAML::Node noise = top.child("noise", false);
  if (noise.IsDefined() && !noise.IsNull()) {
    MapReader nm(file, noise, "noise", errors);
    def.timing_rel_sd = nm.number("timing_rel_sd", false, 1e-6, 1.0).value_or(def.timing_rel_sd);
    def.share_sd = nm.number("share_sd", false, 1e-6, 1.0).value_or(def.share_sd);
    nm.finish();
  }
  std::vector<MeasurementRecord> out;
  for (auto [key, kind] : {std::pair{"layer_latency", MeasurementRecord::Kind::kLayerTime},
                           std::pair{"op_share", MeasurementRecord::Kind::kOpShare}}) {
    YAML::Node list = top.child(key, kind == MeasurementRecord::Kind::kLayerTime);
    if (!list.IsDefined() || list.IsNull()) continue;
    if (!list.IsSequence()) {
      top.error(key, "must be a list of records");
      continue;
    }
    for (size_t i = 0; i < list.size(); ++i)
      read_record(file, list[i], std::string(key) + "[" + std::to_string(i) + "]", kind, model_name, def, errors, out);
  }
  top.finish();
  errors.throw_if_any();
  check_against_graphs(out);
  return out;
}

}  // namespace

void check_against_graphs(const std::vector<MeasurementRecord>& records) {
  ErrorList errors;
  std::set<std::string> timed;  // graph keys with a layer timing
  std::vector<std::string> keys(records.size());
  std::set<std::string> ids;
  for (const auto& r : records)
    if (!ids.insert(r.id).second) errors.add(r.source + ": id: '" + r.id + "' is used by another record");
  for (size_t i = 0; i < records.size(); ++i) {
    const MeasurementRecord& r = records[i];
    const std::string at = r.source + ": " + r.id + ": ";
    try {
      model::LayerGraph g = build_graph(r);
      keys[i] = graph_key(r);
      if (r.cache_entries > 0 && r.cache_entries != g.layer.cache_entries)
        errors.add(at + "matches no graph: cache_entries " + std::to_string(r.cache_entries) + " but a " +
                   model::to_string(r.layer) + " layer at context " + std::to_string(r.context) + " holds " +
                   std::to_string(g.layer.cache_entries));
      if (r.kind == MeasurementRecord::Kind::kLayerTime) {
        timed.insert(keys[i]);
        continue;
      }
      std::vector<LoweredOp> ops = lower(g);
      for (const std::string& pat : r.ops) {
        bool any = false;
        for (const LoweredOp& op : ops) any |= glob_match(pat, op.name);
        if (!any)
          errors.add(at + "matches no graph: op pattern '" + pat + "' matches no lowered op of the " +
                     model::to_string(r.layer) + " layer " + r.variant.key());
      }
    } catch (const Error& e) {
      errors.add(at + "matches no graph: " + e.what());
    }
  }
  for (size_t i = 0; i < records.size(); ++i)
    if (records[i].kind == MeasurementRecord::Kind::kOpShare && !keys[i].empty() && !timed.count(keys[i]))
      errors.add(records[i].source + ": " + records[i].id +
                 ": matches no timed graph: a share needs a layer_latency record of the same layer and variant (" +
                 records[i].variant.key() + ")");
  errors.throw_if_any();
}

std::vector<MeasurementRecord> load_measurements(const std::string& path) { return parse(load_yaml_file(path), path); }
std::vector<MeasurementRecord> load_measurements_text(const std::string& text, const std::string& name) {
  return parse(load_yaml_text(text, name), name);
}

std::string canonical_text(const std::vector<MeasurementRecord>& records) {
  std::string s;
  char buf[64];
  for (const MeasurementRecord& r : records) {
    s += std::string(to_string(r.kind)) + " " + r.id + " " + r.model + " " + model::to_string(r.layer) + " ctx=" +
         std::to_string(r.context) + " " + r.variant.key();
    if (r.kind == MeasurementRecord::Kind::kLayerTime) {
      std::snprintf(buf, sizeof buf, " ms=%.6g", r.ms);
      s += buf;
    } else {
      for (const auto& o : r.ops) s += " op=" + o;
      std::snprintf(buf, sizeof buf, " share=%.6g", r.share);
      s += buf;
    }
    std::snprintf(buf, sizeof buf, " sd=%.6g\n", r.sd);
    s += buf;
  }
  return s;
}

}  // namespace layoutx::costmodel
