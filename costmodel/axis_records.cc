#include "costmodel/axis_records.h"

#include "model/design_space.h"
#include "model/variant.h"
#include "support/yaml_reader.h"

namespace layoutx::costmodel {

namespace {

// One record: {precision, result: ok|fail|unknown, qnn, source, evidence}. `unknown` (nothing
// was tried) is kept as no record.
void read_entry(MapReader& m, std::map<model::Precision, std::vector<Record>>& out) {
  std::optional<model::Precision> p;
  if (auto s = m.string("precision", true)) {
    try {
      p = model::parse_precision(*s);
    } catch (const Error& e) {
      m.error("precision", e.what());
    }
  }
  Record r;
  bool tried = true;
  if (auto s = m.string("result", true)) {
    if (*s == "ok") r.result = Compiles::kYes;
    else if (*s == "fail") r.result = Compiles::kNo;
    else if (*s == "unknown") tried = false;
    else m.error("result", "must be ok, fail or unknown, got '" + *s + "'");
  }
  r.exit_code = static_cast<int>(m.integer("exit_code", false, 0, 255).value_or(0));
  const auto qnn = m.string("qnn", false);
  r.source = m.string("source", tried).value_or("");
  r.evidence = m.string("evidence", true).value_or("");
  if (qnn) r.evidence += " (QNN " + *qnn + ")";
  m.finish();
  if (p) out[*p];  // the precision was looked at
  if (p && tried) out[*p].push_back(std::move(r));
}

AxisRecords parse(const YAML::Node& root, const std::string& file) {
  ErrorList errors;
  AxisRecords out;
  out.source = file;
  MapReader top(file, root, "", errors);
  top.integer("version", true, 1, 1);
  top.child("target", true);        // read by people: the chip the records are about
  top.child("requirements", false);  // read by people: the target features each form needs
  YAML::Node axes = top.child("axes", true);
  top.finish();
  const auto& d = model::design_space();
  if (axes.IsDefined() && !axes.IsMap()) errors.add(where(file, axes) + ": axes: must be a mapping axis: {value: [records]}");
  for (auto a = axes.begin(); axes.IsMap() && a != axes.end(); ++a) {
    const std::string axis = a->first.Scalar();
    if (d.find(axis) < 0) {
      errors.add(where(file, a->first) + ": axes." + axis + ": not an axis of the design space");
      continue;
    }
    const model::Axis& ax = d.axis(axis);
    if (!a->second.IsMap()) {
      errors.add(where(file, a->second) + ": axes." + axis + ": must be a mapping value: [records]");
      continue;
    }
    for (auto val = a->second.begin(); val != a->second.end(); ++val) {
      const std::string value = val->first.Scalar();
      const std::string path = "axes." + axis + "." + value;
      if (std::find(ax.values.begin(), ax.values.end(), value) == ax.values.end()) {
        errors.add(where(file, val->first) + ": " + path + ": not a value of " + axis);
        continue;
      }
      if (!val->second.IsSequence()) {
        errors.add(where(file, val->second) + ": " + path + ": must be a list of records");
        continue;
      }
      auto& recs = out.records[{axis, value}];
      for (size_t i = 0; i < val->second.size(); ++i) {
        MapReader m(file, val->second[i], path + "[" + std::to_string(i) + "]", errors);
        if (m.ok()) read_entry(m, recs);
      }
    }
  }
  errors.throw_if_any();
  return out;
}

}  // namespace

AxisRecords load_axis_records(const std::string& path) { return parse(load_yaml_file(path), path); }
AxisRecords load_axis_records_text(const std::string& text, const std::string& name) {
  return parse(load_yaml_text(text, name), name);
}

void check_axis_records(const AxisRecords& r, const model::Variant& v, Legality& l) {
  const auto& d = model::design_space();
  const model::Precision p = v.precision();
  for (size_t i = 0; i < d.axes().size(); ++i) {
    if (v.value[i] == 0 || !d.axes()[i].layout_choice || !d.applies(v, i)) continue;
    const std::string& axis = d.axes()[i].name;
    const std::string& value = d.value(v, i);
    auto it = r.records.find({axis, value});
    if (it == r.records.end()) continue;  // a form the file does not cover: the op-form rules judge it
    auto at = it->second.find(p);
    static const std::vector<Record> kNone;
    const std::vector<Record>& recs = at == it->second.end() ? kNone : at->second;
    const Compiles c = combine(recs);
    l.compiles = worse(l.compiles, c);
    if (c == Compiles::kYes) continue;
    std::string text = axis + "=" + value + " at " + model::to_string(p) + ": " + to_string(c);
    if (recs.empty()) text += ": never tried (" + r.source + ")";
    for (const Record& rec : recs) text += "; " + describe(rec);
    l.reasons.push_back(text);
  }
}

}  // namespace layoutx::costmodel
