#include "costmodel/device_spec.h"

#include "support/error.h"
#include "support/paths.h"
#include "support/yaml_reader.h"

namespace layoutx::costmodel {

const char* to_string(Term t) {
  switch (t) {
    case Term::kDispatch: return "dispatch";
    case Term::kByte: return "byte";
    case Term::kMac: return "mac";
  }
  return "?";
}

int DeviceSpec::index(OpClass c, model::Precision p, Term t) const {
  for (size_t i = 0; i < coefficients.size(); ++i) {
    const CoefficientSpec& k = coefficients[i];
    if (k.term != t) continue;
    bool has_c = false, has_p = false;
    for (OpClass x : k.classes) has_c |= x == c;
    for (model::Precision x : k.precisions) has_p |= x == p;
    if (has_c && has_p) return static_cast<int>(i);
  }
  return -1;
}

namespace {

std::vector<std::string> string_list(MapReader& m, const char* key, ErrorList& errors) {
  std::vector<std::string> out;
  YAML::Node n = m.child(key, true);
  if (!n.IsDefined() || n.IsNull()) return out;
  if (!n.IsSequence() || n.size() == 0) {
    errors.add(m.at(key) + "must be a non-empty list");
    return out;
  }
  for (const auto& e : n) {
    if (!e.IsScalar()) {
      errors.add(where(m.file(), e) + ": " + m.key_path(key) + ": entries must be names");
      continue;
    }
    out.push_back(e.Scalar());
  }
  return out;
}

DeviceSpec parse(const YAML::Node& root, const std::string& file) {
  ErrorList errors;
  DeviceSpec d;
  d.source = file;
  MapReader top(file, root, "", errors);
  d.name = top.string("name", true).value_or("");
  top.string("soc", false);
  top.string("accelerator", false);
  top.string("memory", false);
  d.dram_gbps = top.number("dram_bandwidth_gbps", true, 1e-3).value_or(1);
  d.vtcm_mb = top.number("vtcm_mb", false, 0).value_or(0);
  d.channel_pad = static_cast<int>(top.integer("channel_pad", false, 1, 1024).value_or(1));
  YAML::Node list = top.child("coefficients", true);
  top.finish();
  if (list.IsDefined() && !list.IsNull()) {
    if (!list.IsSequence()) errors.add(where(file, list) + ": coefficients: must be a list");
    for (size_t i = 0; list.IsSequence() && i < list.size(); ++i) {
      std::string path = "coefficients[" + std::to_string(i) + "]";
      MapReader m(file, list[i], path, errors);
      if (!m.ok()) continue;
      CoefficientSpec k;
      k.name = m.string("name", true).value_or("");
      for (const std::string& s : string_list(m, "classes", errors)) {
        OpClass c;
        if (parse_op_class(s, c)) k.classes.push_back(c);
        else {
          std::string allowed;
          for (OpClass x : all_op_classes()) allowed += (allowed.empty() ? "" : ", ") + std::string(to_string(x));
          errors.add(m.at("classes") + "unknown op class '" + s + "' (allowed: " + allowed + ")");
        }
      }
      for (const std::string& s : string_list(m, "precisions", errors)) {
        try {
          k.precisions.push_back(model::parse_precision(s));
        } catch (const Error& e) {
          errors.add(m.at("precisions") + e.what());
        }
      }
      int terms = 0;
      if (auto v = m.number("dispatch_us", false, 0)) { k.term = Term::kDispatch; k.prior = *v; ++terms; }
      if (auto v = m.number("gbps", false, 1e-6)) { k.term = Term::kByte; k.prior = us_per_mb(*v); ++terms; }
      if (auto v = m.number("gmacs", false, 1e-6)) { k.term = Term::kMac; k.prior = us_per_mmac(*v); ++terms; }
      if (terms != 1) m.error("", "give exactly one of dispatch_us, gbps, gmacs (the prior of this coefficient)");
      if (auto v = m.number("max_gbps", false, 1e-6)) {
        if (k.term != Term::kByte) m.error("max_gbps", "only a gbps coefficient can have a maximum rate");
        k.min_value = us_per_mb(*v);
      }
      if (auto v = m.number("max_gmacs", false, 1e-6)) {
        if (k.term != Term::kMac) m.error("max_gmacs", "only a gmacs coefficient can have a maximum rate");
        k.min_value = us_per_mmac(*v);
      }
      if (k.min_value > k.prior * (1 + 1e-12)) m.error("", "the prior rate is faster than the maximum rate");
      k.rel_sd = m.number("rel_sd", true, 1e-6).value_or(1);
      k.reason = m.string("reason", true).value_or("");
      m.finish();
      d.coefficients.push_back(k);
    }
  }
  // Cross-field rules: one coefficient per cell; every class at every precision where it can
  // occur has a dispatch term and a byte or mac term.
  for (size_t i = 0; i < d.coefficients.size(); ++i)
    for (size_t j = i + 1; j < d.coefficients.size(); ++j) {
      const auto& a = d.coefficients[i];
      const auto& b = d.coefficients[j];
      if (a.term != b.term) continue;
      for (OpClass c : a.classes)
        for (model::Precision p : a.precisions)
          for (OpClass c2 : b.classes)
            for (model::Precision p2 : b.precisions)
              if (c == c2 && p == p2)
                errors.add(file + ": coefficients: '" + a.name + "' and '" + b.name + "' both price the " +
                           to_string(a.term) + " term of " + to_string(c) + " at " + model::to_string(p));
    }
  for (OpClass c : all_op_classes())
    for (model::Precision p : {model::Precision::kFp16, model::Precision::kW8A16, model::Precision::kW4A16}) {
      if (c == OpClass::kConvert && p == model::Precision::kFp16) continue;  // fp16 graphs have no conversions
      if (d.index(c, p, Term::kDispatch) < 0)
        errors.add(file + ": coefficients: no coefficient prices the dispatch term of " + std::string(to_string(c)) +
                   " at " + model::to_string(p));
      if (d.index(c, p, Term::kByte) < 0 && d.index(c, p, Term::kMac) < 0)
        errors.add(file + ": coefficients: no coefficient prices the byte or mac term of " + std::string(to_string(c)) +
                   " at " + model::to_string(p));
    }
  errors.throw_if_any();
  return d;
}

}  // namespace

DeviceSpec load_device(const std::string& path) { return parse(load_yaml_file(path), path); }
DeviceSpec load_device_text(const std::string& text, const std::string& name) {
  return parse(load_yaml_text(text, name), name);
}
DeviceSpec load_device_named(const std::string& name_or_path) {
  const std::string suffix = ".yaml";
  if (name_or_path.size() > suffix.size() &&
      name_or_path.compare(name_or_path.size() - suffix.size(), suffix.size(), suffix) == 0)
    return load_device(name_or_path);
  return load_device(config_path("devices/" + name_or_path + ".yaml"));
}

}  // namespace layoutx::costmodel
