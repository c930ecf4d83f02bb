#include "costmodel/hypotheses_document.h"

#include <cstdio>
#include <sstream>

#include "support/atomic_file.h"
#include "support/error.h"
#include "support/hash.h"
#include "support/json_writer.h"
#include "support/yaml_reader.h"

namespace layoutx::costmodel {

namespace {

constexpr const char* kMarker = "hypotheses_document: 1\n";

// A YAML double-quoted scalar (a JSON string is one).
std::string quoted(const std::string& s) { return "\"" + JsonWriter::escape(s) + "\""; }

}  // namespace

std::string hypotheses_document(const HypothesisSet& set, double mass, const std::string& source_hash) {
  std::vector<double> all;
  for (const HypothesisFit& f : set.fits) all.push_back(f.weight);
  // The device spec's order, as make_predictor keeps them (the combined id hashes members in order).
  const std::vector<size_t> kept = kept_hypotheses(all, mass);
  std::ostringstream o;
  o << kMarker << "# Written by `layoutx calibrate`; do not edit by hand. The " << kept.size() << " of " << set.fits.size()
    << " hypotheses that hold " << mass * 100 << "% of the weight;\n# `layoutx calibrate` fits and reports them all.\n";
  o << "method: " << quoted(set.method) << "\n";
  if (!source_hash.empty()) o << "source_hash: " << quoted(source_hash) << "\n";
  o << "members:\n";
  for (size_t i = 0; i < kept.size(); ++i) {
    const HypothesisFit& f = set.fits[kept[i]];
    char w[40];
    std::snprintf(w, sizeof w, "%.17g", f.weight);  // exact: the combined id hashes the weights
    o << "  - name: " << quoted(f.spec.name) << "\n    weight: " << w << "\n";
    size_t twin = 0;
    while (twin < i && !fitted_identically(set.fits[kept[twin]].report.calibration, f.report.calibration)) ++twin;
    if (twin < i) {
      o << "    same_calibration_as: " << quoted(set.fits[kept[twin]].spec.name) << "\n    calibration_id: "
        << quoted(f.report.calibration.id) << "\n";  // its own: the combined id hashes the members' ids
      continue;
    }
    o << "    calibration: |\n";
    std::istringstream doc(calibration_document(f.report.calibration, &f.report));
    for (std::string line; std::getline(doc, line);) o << (line.empty() ? "" : "      " + line) << "\n";
  }
  return o.str();
}

bool is_hypotheses_document(const std::string& text) { return text.rfind(kMarker, 0) == 0; }

std::unique_ptr<HypothesisPredictor> parse_hypotheses_document(const std::string& text, const std::string& name,
                                                               const DeviceSpec& device, const RuleSet& rules,
                                                               const std::string* expected_source,
                                                               std::string* source_out) {
  ErrorList errors;
  YAML::Node root = load_yaml_text(text, name);
  MapReader top(name, root, "", errors);
  top.integer("hypotheses_document", true, 1, 1);
  top.string("method", false);
  const std::string source = top.string("source_hash", false).value_or("");
  YAML::Node list = top.child("members", true);
  top.finish();
  errors.throw_if_any();
  if (source_out) *source_out = source;
  if (expected_source && source != *expected_source)
    throw Error(name + ": source_hash: " + (source.empty() ? "none" : "'" + source + "'") +
                ", but the data and device spec hash to '" + *expected_source + "' (they changed since it was written)");
  if (!list.IsSequence() || list.size() == 0) throw Error(name + ": members: must be a non-empty list");
  std::vector<std::string> names;
  std::vector<double> weights;
  std::vector<std::unique_ptr<OpLevelPredictor>> members;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = "members[" + std::to_string(i) + "]";
    MapReader m(name, list[i], at, errors);
    const std::string hyp = m.string("name", true).value_or("");
    const double weight = m.number("weight", true, 0.0).value_or(0.0);
    const std::optional<std::string> cal = m.string("calibration", false);
    const std::optional<std::string> twin = m.string("same_calibration_as", false);
    const std::optional<std::string> twin_id = m.string("calibration_id", twin.has_value());
    if (cal.has_value() == twin.has_value())
      m.error("calibration", "give exactly one of calibration and same_calibration_as");
    m.finish();
    errors.throw_if_any();
    const HypothesisSpec* spec = nullptr;
    for (const HypothesisSpec& h : device.hypotheses)
      if (h.name == hyp) spec = &h;
    if (!spec) throw Error(name + ": " + at + ".name: '" + hyp + "' is not a hypothesis of " + device.name);
    DeviceSpec d = with_hypothesis(device, *spec);
    Calibration c;
    if (cal) {
      c = parse_calibration(*cal, name + ": " + at + ".calibration", d);
    } else {
      size_t j = 0;
      while (j < names.size() && names[j] != *twin) ++j;
      if (j == names.size())
        throw Error(name + ": " + at + ".same_calibration_as: '" + *twin + "' is not an earlier member");
      c = members[j]->calibration();
      c.id = twin_id.value_or(c.id);
      std::vector<std::string> want;
      for (const CoefficientSpec& k : d.coefficients) want.push_back(k.name);
      if (c.names != want)
        throw Error(name + ": " + at + ".same_calibration_as: '" + *twin + "' has other coefficients than " + hyp);
    }
    names.push_back(hyp);
    weights.push_back(weight);
    members.push_back(std::make_unique<OpLevelPredictor>(std::move(d), std::move(c), rules));
  }
  return std::make_unique<HypothesisPredictor>(std::move(names), std::move(weights), std::move(members));
}

std::string hypotheses_source_hash(const std::vector<std::string>& file_bytes, const DeviceSpec& device) {
  // The base device's definition is in source_hash; each hypothesis adds its own definition.
  std::string defs;
  for (const HypothesisSpec& h : device.hypotheses) {
    defs += "hypothesis " + h.name + " " + to_text(h.structure) + " drop";
    for (const std::string& d : h.drop) defs += " " + d;
    for (const CoefficientSpec& k : h.add) {
      defs += " add " + k.name + " " + to_string(k.term) + " " + hash_number(k.prior) + " " + hash_number(k.rel_sd) + " " + hash_number(k.min_value);
      for (OpClass c : k.classes) defs += std::string(" ") + to_string(c);
      for (model::Precision p : k.precisions) defs += std::string(" ") + model::to_string(p);
    }
    defs += "\n";
  }
  defs += "weights " + HypothesisSet{}.method + "\n";  // a new weighting makes saved weights stale
  std::vector<std::string> all = file_bytes;
  all.push_back(defs);
  return source_hash(all, device);
}

void save_hypotheses(const HypothesisSet& set, const std::string& source, const std::string& path) {
  write_file_atomically(path, hypotheses_document(set, kPredictorWeightMass, source));
}

}  // namespace layoutx::costmodel
