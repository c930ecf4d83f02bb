#include "model/measurement_file.h"

#include <map>

#include "model/design_space.h"
#include "model/limits.h"
#include "support/yaml_reader.h"

namespace layoutx::model {

namespace {

// Reads the axes of the design-space table named in map `m` (flat in a record, or its nested
// `variant:` map) into `out`; precision is read by the caller.
void read_axes(MapReader& m, RecordVariant& out, ErrorList& errors) {
  for (const auto& axis : design_space().axes()) {
    if (!axis.layout_choice) continue;
    auto s = m.string(axis.name, false);
    if (!s) continue;
    try {
      out.variant.set(axis.name, *s);
      out.selector += (out.selector.empty() ? "" : ",") + axis.name + "=" + *s;
    } catch (const Error& e) {
      errors.add(m.at(axis.name) + e.what());
    }
  }
  if (auto p = m.string("precision", false)) {
    try {
      out.variant.set(parse_precision(*p));
      out.has_precision = true;
    } catch (const Error& e) {
      m.error("precision", e.what());
    }
  }
}

// The variant a record names: flat axes, a nested `variant:` map, or both.
RecordVariant read_variant(MapReader& r, ErrorList& errors) {
  RecordVariant out;
  const size_t before = errors.messages().size();
  read_axes(r, out, errors);
  bool clean = true;  // every named axis and the precision were read (so validate() is meaningful)
  YAML::Node nested = r.child("variant", false);
  if (nested.IsDefined() && !nested.IsNull()) {
    MapReader m(r.file(), nested, r.key_path("variant"), errors);
    if (m.ok()) read_axes(m, out, errors);  // else MapReader said "must be a mapping"
    clean = errors.messages().size() == before;
    m.finish();
  } else {
    clean = errors.messages().size() == before;
  }
  if (out.has_precision)
    out.selector += std::string(out.selector.empty() ? "" : ",") + "precision=" +
                    to_string(out.variant.precision());
  if (clean) try {
      out.variant.validate();
    } catch (const Error& e) {
      r.error("variant", e.what());
    }
  return out;
}

// A context that may be written "unstated" (the ingest rules only).
std::optional<int> read_context(MapReader& r, bool required, bool allow_unstated) {
  if (allow_unstated && r.has("context")) {
    YAML::Node n = r.node()["context"];
    if (n.IsScalar() && n.Scalar() == "unstated") {
      r.allow("context");
      return std::nullopt;
    }
  }
  auto v = r.integer("context", required, limits::kMinContext, limits::kMaxContext);
  if (!v) return std::nullopt;
  return static_cast<int>(*v);
}

std::string read_layer(MapReader& r, bool allow_any) {
  std::string layer = r.string("layer", true).value_or("");
  if (layer.empty() || layer == "sliding" || layer == "full" || (allow_any && layer == "any")) return layer;
  r.error("layer", "must be sliding" + std::string(allow_any ? ", full or any" : " or full") + ", got \"" + layer +
                       "\"");
  return "";
}

// `{form: ring (roll's attention, returns the new entry only), result: ok}`: YAML reads the text
// after the comma as a key with no value. Such keys (left unread by the record's reader, null
// value) are joined back onto `text` in document order, marked allowed, and reported as a
// warning. Call after every other key of the record was read.
void join_split_prose(MapReader& r, std::string& text, std::vector<std::string>& warnings) {
  std::string joined;
  for (const auto& [key, value] : r.unread_entries()) {
    if (!value.IsNull()) continue;
    joined += ", " + key;
    r.allow(key);
  }
  if (joined.empty()) return;
  text += joined;
  warnings.push_back(r.at("form") + "an unquoted comma split the text into keys without values; read as \"" + text +
                     "\" (quote the value)");
}

void read_header(MapReader& top, const DocumentRules& rules, MeasurementDocument& doc, ErrorList& errors,
                 double& to_ms) {
  if (auto v = top.integer("version", rules.calibration, 1, 1)) doc.version = static_cast<int>(*v);
  doc.model = top.string("model", true).value_or("");
  YAML::Node dev = top.child("device", false);
  if (dev.IsDefined() && dev.IsScalar()) {
    doc.device_id = dev.Scalar();
  } else if (dev.IsDefined() && !dev.IsNull()) {
    MapReader d(doc.file, dev, "device", errors);
    if (d.ok()) {
      std::string desc = d.string("name", true).value_or("");
      for (const char* k : {"soc", "accelerator", "runtime"})
        if (auto s = d.string(k, false)) desc += "; " + std::string(k) + ": " + *s;
      if (auto bw = d.number("dram_bandwidth_gbps", false, 0.0)) desc += "; dram " + std::to_string(*bw) + " GB/s";
      doc.device_description = desc;
      doc.runtime = d.string("runtime", false).value_or("");
      d.finish();
    }
  }
  const std::string unit = top.string("unit", false).value_or("ms_per_layer");
  to_ms = 1.0;
  if (unit == "us_per_layer") to_ms = 1e-3;
  else if (unit != "ms_per_layer")
    errors.add(top.at("unit") + "unknown unit \"" + unit + "\" (expected ms_per_layer or us_per_layer)");
  doc.notes = top.string("notes", false).value_or("");
  YAML::Node noise = top.child("noise", false);
  if (noise.IsDefined() && !noise.IsNull()) {
    MapReader nm(doc.file, noise, "noise", errors);
    doc.timing_rel_sd = nm.number("timing_rel_sd", false, 1e-6, 1.0);
    doc.share_sd = nm.number("share_sd", false, 1e-6, 1.0);
    nm.finish();
  }
}

// `export: N`, the device's export the record was measured on (1 = the first), if given.
std::optional<int> read_export(MapReader& r) {
  auto n = r.integer("export", false, 1, limits::kMaxExports);
  if (!n) return std::nullopt;
  return static_cast<int>(*n);
}

// All or none: when a record of the document names its export, every timing and share must,
// or the replay would silently leave the unnamed ones out. Names the first record without one.
template <class Entry>
void check_exports_all_or_none(const std::vector<Entry>& records, const char* list, bool any, ErrorList& errors) {
  if (!any) return;
  for (const Entry& e : records)
    if (!e.export_index) {
      errors.add(e.where + ": " + list + (e.id.empty() ? "" : " '" + e.id + "'") + ": export: missing; other records of the document name their export "
                 "(give every timing and share one, or none)");
      return;
    }
}

// `exports:` [{export: N, name: text}], each N named once.
void read_export_names(MapReader& top, MeasurementDocument& doc, ErrorList& errors) {
  YAML::Node list = top.child("exports", false);
  if (!list.IsDefined() || list.IsNull()) return;
  if (!list.IsSequence()) return top.error("exports", "must be a list of {export: N, name: text}");
  for (size_t i = 0; i < list.size(); ++i) {
    MapReader r(top.file(), list[i], "exports[" + std::to_string(i) + "]", errors);
    if (!r.ok()) continue;
    auto n = r.integer("export", true, 1, limits::kMaxExports);
    auto name = r.string("name", true);
    if (n && name && !doc.export_names.emplace(static_cast<int>(*n), *name).second)
      r.error("export", "export " + std::to_string(*n) + " is named twice");
    r.finish();
  }
}

// Reads every element of the list `key` as an Entry: read(r, e) fills e from the record's map
// reader; the entry is kept when reading it added no error. Sets each entry's `where`.
template <class Entry, class Read>
void each_record(MapReader& top, const char* key, bool required, ErrorList& errors, std::vector<Entry>& out,
                 Read read) {
  YAML::Node list = top.child(key, required);
  if (!list.IsDefined() || list.IsNull()) return;
  if (!list.IsSequence()) {
    top.error(key, "must be a list of records");
    return;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    MapReader r(top.file(), list[i], std::string(key) + "[" + std::to_string(i) + "]", errors);
    if (!r.ok()) continue;
    const size_t before = errors.messages().size();
    Entry e;
    e.where = where(top.file(), list[i]);
    read(r, e);
    r.finish();
    if (errors.messages().size() == before) out.push_back(std::move(e));
  }
}

}  // namespace

MeasurementDocument read_measurement_document(const YAML::Node& root, const std::string& file,
                                              const DocumentRules& rules, ErrorList& errors) {
  MeasurementDocument doc;
  doc.file = file;
  MapReader top(file, root, "", errors);
  if (!top.ok()) return doc;  // MapReader said "document: must be a mapping"
  double to_ms = 1.0;
  read_header(top, rules, doc, errors, to_ms);
  const bool strict = rules.calibration;

  each_record(top, "layer_latency", strict, errors, doc.timings, [&](MapReader& r, TimingEntry& t) {
    t.line = static_cast<int>(r.node().Mark().line + 1);
    t.id = r.string("id", strict).value_or("");
    t.layer = read_layer(r, false);
    t.context = read_context(r, strict, !strict);
    if (auto ce = r.integer("cache_entries", false, 1, limits::kMaxContext)) t.cache_entries = static_cast<int>(*ce);
    if (!t.context && !t.cache_entries && !strict) r.error("", "needs context or cache_entries");
    t.variant = read_variant(r, errors);
    if (!t.variant.has_precision) r.error("", "needs precision (in the record or its variant)");
    // A latency must be positive: a zero or negative time is a transcription error.
    const bool has_ms = r.has("ms"), has_us = r.has("us");
    if (has_ms == has_us) r.error("", "needs exactly one of ms or us");
    if (has_ms) t.ms = r.number("ms", true, 1e-9).value_or(0) * to_ms;
    if (has_us) t.ms = r.number("us", true, 1e-6).value_or(0) / 1000.0;
    if (t.ms > limits::kMaxLayerMs)  // after the header's unit
      r.error(has_ms ? "ms" : "us", "one layer's decode step must be at most " + std::to_string(static_cast<int>(limits::kMaxLayerMs)) + " ms");
    t.samples = static_cast<int>(r.integer("samples", false, 1, 1 << 30).value_or(1));
    t.export_index = read_export(r);
  });

  each_record(top, "op_share", false, errors, doc.shares, [&](MapReader& r, ShareEntry& s) {
    s.id = r.string("id", strict).value_or("");
    s.layer = read_layer(r, !strict);
    s.context = read_context(r, strict, !strict);
    s.variant = read_variant(r, errors);
    if (r.has("ops") || strict) {
      YAML::Node ops = r.child("ops", true);
      if (ops.IsDefined() && !ops.IsNull()) {
        if (!ops.IsSequence() || ops.size() == 0) r.error("ops", "must be a non-empty list of op name globs");
        else
          for (const auto& o : ops) s.ops.push_back(o.Scalar());
      }
    } else {
      s.op = r.string("op", true).value_or("");
    }
    const bool point = r.has("share");
    s.band = r.has("share_min") || r.has("share_max");
    if (point == s.band) {
      r.error("", "give either share, or share_min and share_max");
      for (const char* k : {"share", "share_min", "share_max"}) r.allow(k);
    } else if (point) {
      s.share_min = s.share_max = r.number("share", true, 0.0, 1.0).value_or(0);
    } else {
      auto lo = r.number("share_min", true, 0.0, 1.0);
      auto hi = r.number("share_max", true, 0.0, 1.0);
      if (lo && hi && *lo > *hi) r.error("share_min", "must not exceed share_max");
      s.share_min = lo.value_or(0);
      s.share_max = hi.value_or(0);
    }
    s.export_index = read_export(r);
  });

  each_record(top, "compile", false, errors, doc.compiles, [&](MapReader& r, CompileEntry& c) {
    if (auto p = r.string("precision", true)) {
      try {
        c.precision = to_string(parse_precision(*p));
      } catch (const Error& e) {
        r.error("precision", e.what());
      }
    }
    c.form = r.string("form", false).value_or("");
    if (auto key = r.string("variant", false)) {
      try {
        c.variant_key = parse_variant(*key).key();
      } catch (const Error& e) {
        r.error("variant", e.what());
      }
    }
    c.result = r.string("result", true).value_or("ok");
    if (c.result != "ok" && c.result != "fail" && c.result != "contested")
      r.error("result", "must be ok, fail or contested, got \"" + c.result + "\"");
    if (auto code = r.integer("exit_code", false, -255, 255)) c.exit_code = static_cast<int>(*code);
    c.message = r.string("message", false).value_or("");
    if (!c.form.empty()) join_split_prose(r, c.form, doc.warnings);  // last: every key of the record was read
  });

  // A record id names one record (ingest stores it, calibrate reports by it): given twice, the
  // second would shadow the first.
  std::map<std::string, std::string> first_at;
  auto unique_id = [&](const std::string& id, const std::string& where) {
    if (id.empty()) return;
    auto [it, inserted] = first_at.emplace(id, where);
    if (!inserted) errors.add(where + ": id: '" + id + "' is given twice (first at " + it->second + ")");
  };
  for (const TimingEntry& t : doc.timings) unique_id(t.id, t.where);
  for (const ShareEntry& s : doc.shares) unique_id(s.id, s.where);

  bool any_export = false;
  for (const TimingEntry& t : doc.timings) any_export |= t.export_index.has_value();
  for (const ShareEntry& s : doc.shares) any_export |= s.export_index.has_value();
  check_exports_all_or_none(doc.timings, "layer_latency", any_export, errors);
  check_exports_all_or_none(doc.shares, "op_share", any_export, errors);

  read_export_names(top, doc, errors);

  // Parity results are the parity verb's: allowed, not read.
  top.allow("parity");
  top.finish();
  return doc;
}

}  // namespace layoutx::model
