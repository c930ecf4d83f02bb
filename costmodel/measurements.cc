#include "costmodel/measurements.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "costmodel/lowering.h"
#include "model/measurement_file.h"
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

namespace {

const model::ModelSpec& model_of(const MeasurementRecord& r) {
  static std::map<std::string, model::ModelSpec> cache;  // model specs by name, loaded once
  auto it = cache.find(r.model);
  if (it == cache.end()) it = cache.emplace(r.model, model::load_model(r.model)).first;
  return it->second;
}

}  // namespace

model::LayerSpec measured_layer(const MeasurementRecord& r) { return model_of(r).layer(r.layer, r.context); }

model::LayerGraph build_graph(const MeasurementRecord& r) {
  return model::build_layer_graph(model_of(r).layer(r.layer, r.context), r.variant);
}

// The layer spec says the cache size; the graph need not be built.
std::string graph_key(const MeasurementRecord& r) {
  const int cache_entries = model_of(r).layer(r.layer, r.context).cache_entries;
  return r.model + "|" + model::to_string(r.layer) + "|" + std::to_string(cache_entries) + "|" + r.variant.key();
}

namespace {

using model::CompileEntry;
using model::DocumentRules;
using model::MeasurementDocument;
using model::RecordVariant;
using model::ShareEntry;
using model::TimingEntry;

// The calibration's records from the one reader of the format (model/measurement_file.h).
std::vector<MeasurementRecord> parse(const YAML::Node& root, const std::string& file, bool check_graphs = true) {
  ErrorList errors;
  const MeasurementDocument doc = read_measurement_document(root, file, DocumentRules{.calibration = true}, errors);
  // Compile outcomes are legality, not cost: they live in the device's rules file.
  for (const CompileEntry& c : doc.compiles)
    errors.add(c.where + ": compile: converter outcomes belong in the rules file (configs/rules/), not in the "
                         "calibration measurements");
  const double timing_rel_sd = doc.timing_rel_sd.value_or(0.02), share_sd = doc.share_sd.value_or(0.005);
  std::vector<MeasurementRecord> out;
  auto common = [&](MeasurementRecord& r, const std::string& where, const std::string& id, const std::string& layer,
                    std::optional<int> context, const RecordVariant& v) {
    r.source = where;
    r.id = id;
    r.model = doc.model;
    r.layer = model::parse_layer_type(layer, "layer");  // the reader admitted sliding or full only
    r.context = context.value_or(4096);
    r.variant = v.variant;
  };
  for (const TimingEntry& t : doc.timings) {
    MeasurementRecord r;
    r.kind = MeasurementRecord::Kind::kLayerTime;
    common(r, t.where, t.id, t.layer, t.context, t.variant);
    r.cache_entries = t.cache_entries.value_or(0);
    r.ms = t.ms;
    r.sd = timing_rel_sd;
    r.export_index = t.export_index.value_or(0);
    out.push_back(std::move(r));
  }
  for (const ShareEntry& s : doc.shares) {
    MeasurementRecord r;
    r.kind = MeasurementRecord::Kind::kOpShare;
    common(r, s.where, s.id, s.layer, s.context, s.variant);
    r.ops = s.ops;
    // A band is read as +-2 standard deviations around its midpoint.
    r.share = 0.5 * (s.share_min + s.share_max);
    r.sd = s.band ? std::max(0.25 * (s.share_max - s.share_min), 1e-4) : share_sd;
    r.export_index = s.export_index.value_or(0);
    out.push_back(std::move(r));
  }
  errors.throw_if_any();
  if (check_graphs) check_against_graphs(out);
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
std::vector<MeasurementRecord> load_measurements_unchecked(const std::string& path) {
  return parse(load_yaml_file(path), path, false);
}
std::vector<MeasurementRecord> load_measurements_text(const std::string& text, const std::string& name) {
  return parse(load_yaml_text(text, name), name);
}

ExportNames load_export_names_text(const std::string& text, const std::string& name) {
  ErrorList errors;
  const MeasurementDocument doc =
      read_measurement_document(load_yaml_text(text, name), name, DocumentRules{.calibration = true}, errors);
  errors.throw_if_any();
  return doc.export_names;
}

void check_measurement_device_text(const std::string& text, const std::string& name, const std::string& device) {
  const YAML::Node root = load_yaml_text(text, name);
  const YAML::Node d = root.IsMap() ? root["device"] : YAML::Node();
  if (!d.IsDefined() || !d.IsScalar() || d.Scalar() == device) return;
  throw Error(name + ":" + std::to_string(d.Mark().line + 1) + ":" + std::to_string(d.Mark().column + 1) +
              ": device: the timings are of '" + d.Scalar() + "', not of the device being fitted ('" + device +
              "'); give --device " + d.Scalar() + ", or a file of " + device + "'s timings");
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
