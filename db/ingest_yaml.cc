// Our measurement YAML: the shape of shared/data/spark-s25-calibration.yaml and
// configs/calibration/*.yaml. Top level: device {name, soc, accelerator, runtime,
// dram_bandwidth_gbps}, model, unit (ms_per_layer | us_per_layer), layer_latency (records
// {layer, cache_entries | context, the variant axes, precision, ms | us, samples}), op_share
// ({layer, context, axes, op, share | share_min + share_max}), compile ({precision, form,
// result: ok | fail, exit_code, message}), parity (read elsewhere; allowed here).
// Unknown keys are errors, all collected (style.md).
#include <cmath>

#include "db/profile.h"
#include "model/design_space.h"
#include "model/variant.h"
#include "support/yaml_reader.h"

namespace layoutx::db {

namespace {

// The layout axes of the design-space table (precision is read on its own below).
std::vector<std::string> variant_axes() {
  std::vector<std::string> a;
  for (const auto& axis : model::design_space().axes())
    if (axis.layout_choice) a.push_back(axis.name);
  return a;
}

// The variant a record names: axes flat in the record (shared/data's shape) or in a nested
// `variant:` map (configs/calibration's shape), precision in either place. Axes not named take
// their defaults; `selector` lists the named ones ("axis=value,...", precision last).
model::Variant read_variant(MapReader& r, std::string& selector, bool& has_precision, ErrorList& errors) {
  model::Variant v;
  has_precision = false;
  auto read_from = [&](MapReader& m) {
    for (const auto& axis : variant_axes()) {
      auto s = m.string(axis, false);
      if (!s) continue;
      try {
        v.set(axis, *s);
        selector += (selector.empty() ? "" : ",") + axis + "=" + *s;
      } catch (const Error& e) {
        errors.add(m.at(axis) + e.what());
      }
    }
  };
  auto read_precision = [&](MapReader& m) {
    if (auto p = m.string("precision", false)) {
      try {
        v.set(model::parse_precision(*p));
        has_precision = true;
      } catch (const Error& e) {
        m.error("precision", e.what());
      }
    }
  };
  read_from(r);
  read_precision(r);
  YAML::Node nested = r.child("variant", false);
  if (nested.IsDefined() && !nested.IsNull()) {
    MapReader m(r.file(), nested, r.key_path("variant"), errors);
    if (m.ok()) {
      read_from(m);
      read_precision(m);
      m.finish();
    }
  }
  if (has_precision) selector += std::string(selector.empty() ? "" : ",") + "precision=" + model::to_string(v.precision());
  return v;
}

// A context that may be written "unstated".
std::optional<int> optional_context(MapReader& r, std::string_view key) {
  if (!r.has(key)) return std::nullopt;
  YAML::Node n = r.node()[std::string(key)];
  if (n.IsScalar() && n.Scalar() == "unstated") {
    r.allow(key);
    return std::nullopt;
  }
  auto v = r.integer(key, false, 1, 1 << 24);
  if (!v) return std::nullopt;
  return static_cast<int>(*v);
}

}  // namespace

Profile parse_measurement_yaml(std::string_view text, const std::string& name) {
  // 1. Parse.
  YAML::Node doc = load_yaml_text(std::string(text), name);
  ErrorList errors;
  Profile prof;
  prof.format = Format::kYaml;
  prof.tool = "layoutx-measurements";
  prof.boundary = "ours";
  MapReader top(name, doc, "", errors);
  if (!top.ok()) errors.throw_if_any();
  // 2. Header: device, model, unit.
  YAML::Node dev = top.child("device", false);
  if (dev.IsDefined() && dev.IsScalar()) {
    prof.device = dev.Scalar();  // our device id (configs/calibration's shape)
  } else if (dev.IsDefined() && !dev.IsNull()) {
    MapReader d(name, dev, "device", errors);
    if (d.ok()) {
      std::string desc = d.string("name", true).value_or("");
      for (const char* k : {"soc", "accelerator", "runtime"})
        if (auto s = d.string(k, false)) desc += "; " + std::string(k) + ": " + *s;
      if (auto bw = d.number("dram_bandwidth_gbps", false, 0.0)) desc += "; dram " + std::to_string(*bw) + " GB/s";
      prof.device_description = desc;
      if (auto rt = d.string("runtime", false); rt && rt->find("AI Hub") != std::string::npos) prof.tool_version = *rt;
      d.finish();
    }
  }
  std::string model = top.string("model", true).value_or("");
  std::string unit = top.string("unit", false).value_or("ms_per_layer");
  double to_ms = 1.0;
  if (unit == "ms_per_layer") to_ms = 1.0;
  else if (unit == "us_per_layer") to_ms = 1e-3;
  else errors.add(top.at("unit") + "unknown unit \"" + unit + "\" (expected ms_per_layer or us_per_layer)");
  if (auto notes = top.string("notes", false)) prof.notes = *notes;
  if (auto version = top.integer("version", false, 1, 1)) prof.tool_version = "measurements v" + std::to_string(*version);
  // The fit's noise assumptions (configs/calibration's shape) belong to the cost model; kept as notes.
  YAML::Node noise = top.child("noise", false);
  if (noise.IsDefined() && noise.IsMap())
    for (const auto& kv : noise)
      prof.notes += (prof.notes.empty() ? "" : "; ") + ("noise." + kv.first.Scalar()) + " " + kv.second.Scalar();

  // 3. Layer latencies.
  YAML::Node lat = top.child("layer_latency", false);
  if (lat.IsDefined() && !lat.IsNull()) {
    if (!lat.IsSequence()) errors.add(top.at("layer_latency") + "must be a list of records");
    else
      for (size_t i = 0; i < lat.size(); ++i) {
        MapReader r(name, lat[i], "layer_latency[" + std::to_string(i) + "]", errors);
        if (!r.ok()) continue;
        LayerRecord rec;
        rec.line = static_cast<int>(lat[i].Mark().line + 1);
        rec.model = model;
        rec.layer_type = r.string("layer", true).value_or("");
        if (rec.layer_type != "sliding" && rec.layer_type != "full" && !rec.layer_type.empty())
          r.error("layer", "must be sliding or full, got \"" + rec.layer_type + "\"");
        std::string selector;
        bool has_precision = false;
        model::Variant v = read_variant(r, selector, has_precision, errors);
        if (!has_precision) r.error("", "needs precision (in the record or its variant)");
        r.string("id", false);  // a record's name in configs/calibration; not stored
        try {
          v.validate();
          rec.variant_key = v.key();
        } catch (const Error& e) {
          errors.add(r.at("") + e.what());
        }
        if (auto ce = r.integer("cache_entries", false, 0, 1 << 24)) rec.cache_entries = static_cast<int>(*ce);
        rec.ctx = optional_context(r, "context");
        if (!rec.ctx && rec.cache_entries) rec.ctx = *rec.cache_entries + 1;  // the smallest context with that cache
        if (rec.ctx && !rec.cache_entries && rec.layer_type == "full") rec.cache_entries = *rec.ctx - 1;
        if (!rec.ctx) r.error("", "needs context or cache_entries");
        bool has_ms = r.has("ms"), has_us = r.has("us");
        if (has_ms == has_us) r.error("", "needs exactly one of ms or us");
        if (has_ms) rec.ms = r.number("ms", true, 0.0).value_or(0.0) * to_ms;
        if (has_us) rec.ms = r.number("us", true, 0.0).value_or(0.0) / 1000.0;
        rec.samples = static_cast<int>(r.integer("samples", false, 1, 1 << 30).value_or(1));
        r.finish();
        prof.layers.push_back(rec);
      }
  }

  // 4. Op shares.
  YAML::Node shares = top.child("op_share", false);
  if (shares.IsDefined() && !shares.IsNull()) {
    if (!shares.IsSequence()) errors.add(top.at("op_share") + "must be a list of records");
    else
      for (size_t i = 0; i < shares.size(); ++i) {
        MapReader r(name, shares[i], "op_share[" + std::to_string(i) + "]", errors);
        if (!r.ok()) continue;
        ShareRecord s;
        s.model = model;
        s.layer_type = r.string("layer", true).value_or("");
        if (s.layer_type != "sliding" && s.layer_type != "full" && s.layer_type != "any")
          r.error("layer", "must be sliding, full or any, got \"" + s.layer_type + "\"");
        bool has_precision = false;
        read_variant(r, s.selector, has_precision, errors);
        r.string("id", false);
        s.ctx = optional_context(r, "context");
        if (r.has("ops")) {  // configs/calibration: the lowered ops' names (globs)
          YAML::Node ops = r.child("ops", true);
          if (!ops.IsSequence()) r.error("ops", "must be a list of op names");
          else
            for (const auto& o : ops) s.op += (s.op.empty() ? "" : ", ") + o.as<std::string>("");
        } else {
          s.op = r.string("op", true).value_or("");
        }
        if (r.has("share")) {
          s.share_min = s.share_max = r.number("share", true, 0.0, 1.0).value_or(0.0);
        } else {
          s.share_min = r.number("share_min", true, 0.0, 1.0).value_or(0.0);
          s.share_max = r.number("share_max", true, 0.0, 1.0).value_or(0.0);
          if (s.share_min > s.share_max) r.error("share_min", "is above share_max");
        }
        r.finish();
        prof.shares.push_back(s);
      }
  }

  // 5. Compile outcomes.
  YAML::Node comp = top.child("compile", false);
  if (comp.IsDefined() && !comp.IsNull()) {
    if (!comp.IsSequence()) errors.add(top.at("compile") + "must be a list of records");
    else
      for (size_t i = 0; i < comp.size(); ++i) {
        MapReader r(name, comp[i], "compile[" + std::to_string(i) + "]", errors);
        if (!r.ok()) continue;
        CompileRecord c;
        if (auto p = r.string("precision", true)) {
          try {
            c.precision = model::to_string(model::parse_precision(*p));
          } catch (const Error& e) {
            r.error("precision", e.what());
          }
        }
        c.form = r.string("form", false).value_or("");
        if (auto key = r.string("variant", false)) {
          try {
            c.variant_key = model::parse_variant(*key).key();
          } catch (const Error& e) {
            r.error("variant", e.what());
          }
        }
        std::string result = r.string("result", true).value_or("ok");
        if (result != "ok" && result != "fail") r.error("result", "must be ok or fail, got \"" + result + "\"");
        c.ok = result == "ok";
        if (auto code = r.integer("exit_code", false, -255, 255)) c.exit_code = static_cast<int>(*code);
        c.message = r.string("message", false).value_or("");
        r.finish();
        prof.compiles.push_back(c);
      }
  }
  // Parity results are the parity verb's; allowed here, not stored.
  top.allow("parity");
  top.finish();
  errors.throw_if_any();
  return prof;
}

}  // namespace layoutx::db
