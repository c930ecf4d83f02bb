#include "costmodel/device_spec.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>

#include "model/limits.h"
#include "support/error.h"
#include "support/paths.h"
#include "support/timing_boundaries.h"
#include "support/yaml_reader.h"

namespace layoutx::costmodel {

const char* to_string(Term t) {
  switch (t) {
    case Term::kDispatch: return "dispatch";
    case Term::kByte: return "byte";
    case Term::kMac: return "mac";
    case Term::kGraph: return "graph";
    case Term::kSpill: return "spill";
    case Term::kStall: return "stall";
  }
  return "?";
}

const char* to_string(Unit u) {
  switch (u) {
    case Unit::kSerial: return "serial";
    case Unit::kMemory: return "memory";
    case Unit::kCompute: return "compute";
    case Unit::kCopy: return "copy";
  }
  return "?";
}

bool is_graph_term(Term t) { return t == Term::kGraph || t == Term::kSpill || t == Term::kStall; }

int DeviceSpec::graph_index(Term t, model::Precision p) const {
  for (size_t i = 0; i < coefficients.size(); ++i) {
    const CoefficientSpec& k = coefficients[i];
    if (k.term != t) continue;
    if (k.precisions.empty()) return static_cast<int>(i);
    for (model::Precision x : k.precisions)
      if (x == p) return static_cast<int>(i);
  }
  return -1;
}

namespace {
constexpr size_t kPrecisions = 3, kOpTerms = 3;  // fp16, w8a16, w4a16; dispatch, byte, mac
size_t table_slot(OpClass c, model::Precision p, Term t) {
  return (static_cast<size_t>(c) * kPrecisions + static_cast<size_t>(p)) * kOpTerms + static_cast<size_t>(t);
}
}  // namespace

void DeviceSpec::build_index() {
  index_table.clear();
  std::vector<int> table(all_op_classes().size() * kPrecisions * kOpTerms, -1);
  for (OpClass c : all_op_classes())
    for (model::Precision p : {model::Precision::kFp16, model::Precision::kW8A16, model::Precision::kW4A16})
      for (Term t : {Term::kDispatch, Term::kByte, Term::kMac}) table[table_slot(c, p, t)] = index(c, p, t);
  index_table = std::move(table);
}

int DeviceSpec::index(OpClass c, model::Precision p, Term t) const {
  if (!index_table.empty() && static_cast<size_t>(t) < kOpTerms) return index_table[table_slot(c, p, t)];
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

// One coefficient entry (`path` names it in messages).
CoefficientSpec parse_coefficient(MapReader& m, ErrorList& errors) {
  CoefficientSpec k;
  k.name = m.string("name", true).value_or("");
  int terms = 0;
  if (auto v = m.number("dispatch_us", false, 0)) { k.term = Term::kDispatch; k.prior = *v; ++terms; }
  if (auto v = m.number("gbps", false, 1e-6)) { k.term = Term::kByte; k.prior = us_per_mb(*v); ++terms; }
  if (auto v = m.number("gmacs", false, 1e-6)) { k.term = Term::kMac; k.prior = us_per_mmac(*v); ++terms; }
  if (auto v = m.number("graph_us", false, 0)) { k.term = Term::kGraph; k.prior = *v; ++terms; }
  if (auto v = m.number("spill_gbps", false, 1e-6)) { k.term = Term::kSpill; k.prior = us_per_mb(*v); ++terms; }
  if (auto v = m.number("stall_gbps", false, 1e-6)) { k.term = Term::kStall; k.prior = us_per_mb(*v); ++terms; }
  if (terms != 1)
    m.error("", "give exactly one of dispatch_us, gbps, gmacs, graph_us, spill_gbps, stall_gbps (the prior of this coefficient)");
  // Graph-level terms price the layer graph, not an op class: no classes.
  if (!is_graph_term(k.term))
    for (const std::string& s : string_list(m, "classes", errors)) {
      OpClass c;
      if (parse_op_class(s, c)) k.classes.push_back(c);
      else {
        std::string allowed;
        for (OpClass x : all_op_classes()) allowed += (allowed.empty() ? "" : ", ") + std::string(to_string(x));
        errors.add(m.at("classes") + "unknown op class '" + s + "' (allowed: " + allowed + ")");
      }
    }
  if (!is_graph_term(k.term) || m.has("precisions"))
    for (const std::string& s : string_list(m, "precisions", errors)) {
      try {
        k.precisions.push_back(model::parse_precision(s));
      } catch (const Error& e) {
        errors.add(m.at("precisions") + e.what());
      }
    }
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
  if (auto u = m.string("unit", false)) {
    bool known = false;
    for (Unit x : {Unit::kSerial, Unit::kMemory, Unit::kCompute, Unit::kCopy})
      if (*u == to_string(x)) {
        k.unit = x;
        known = true;
      }
    if (!known) m.error("unit", "unknown unit '" + *u + "' (allowed: serial, memory, compute, copy)");
  }
  m.finish();
  return k;
}

std::vector<CoefficientSpec> parse_coefficient_list(const std::string& file, const YAML::Node& list,
                                                    const std::string& key, ErrorList& errors) {
  std::vector<CoefficientSpec> out;
  if (!list.IsDefined() || list.IsNull()) return out;
  if (!list.IsSequence()) errors.add(where(file, list) + ": " + key + ": must be a list");
  for (size_t i = 0; list.IsSequence() && i < list.size(); ++i) {
    MapReader m(file, list[i], key + "[" + std::to_string(i) + "]", errors);
    if (!m.ok()) continue;
    out.push_back(parse_coefficient(m, errors));
  }
  return out;
}

// Structure keys present in `node` override `s` (costmodel/structure.h: the table of switches).
Structure parse_structure(const std::string& file, const YAML::Node& node, const std::string& key, Structure s,
                          ErrorList& errors) {
  if (!node.IsDefined() || node.IsNull()) return s;
  MapReader m(file, node, key, errors);
  if (!m.ok()) return s;
  s = StructureTable::shipped().parse(m, s);
  m.finish();
  return s;
}

bool valid_device_name(const std::string& s) {
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') return false;
  return !s.empty() && s.front() != '.' && s.front() != '-';
}

// identity: who the device is (emit/bundle.h). An HTP architecture needs the VTCM it has.
void parse_identity(const std::string& file, const YAML::Node& node, DeviceSpec& d, ErrorList& errors) {
  if (!node.IsDefined() || node.IsNull()) return;
  MapReader m(file, node, "identity", errors);
  if (!m.ok()) return;
  d.identity.device = m.string("device", true).value_or("");
  d.identity.aihub_device = m.string("aihub_device", false).value_or("");
  d.identity.soc_id = m.string("soc_id", false).value_or("");
  if (auto a = m.string("htp_arch", false)) {
    bool ok = a->size() >= 2 && (*a)[0] == 'v';
    for (size_t i = 1; ok && i < a->size(); ++i) ok = std::isdigit(static_cast<unsigned char>((*a)[i])) != 0;
    if (!ok) m.error("htp_arch", "expected a Hexagon architecture such as v79, got '" + *a + "'");
    else if (d.vtcm_mb <= 0) m.error("htp_arch", "an HTP device needs vtcm_mb (its VTCM in MB) at the top level");
    d.identity.htp_arch = *a;
  }
  m.finish();
}

// calibration: the device's calibration files, relative to the configs folder.
CalibrationFiles parse_calibration_files(const std::string& file, const YAML::Node& node, ErrorList& errors) {
  CalibrationFiles c;
  if (!node.IsDefined() || node.IsNull()) return c;
  MapReader m(file, node, "calibration", errors);
  if (!m.ok()) return c;
  c.measurements = m.string("measurements", false).value_or("");
  c.saved = m.string("saved", false).value_or("");
  c.hypotheses = m.string("hypotheses", false).value_or("");
  c.rules = m.string("rules", false).value_or("");
  if (!c.hypotheses.empty() && c.measurements.empty())
    m.error("hypotheses", "a saved hypothesis calibration needs the measurements it was fitted on (calibration.measurements)");
  // One YAML document (costmodel/hypotheses_document.h).
  if (!c.hypotheses.empty() && (c.hypotheses.size() <= 5 || c.hypotheses.substr(c.hypotheses.size() - 5) != ".yaml"))
    m.error("hypotheses", "expected a file name ending in .yaml, got '" + c.hypotheses + "'");
  m.finish();
  return c;
}

// boundaries: which profile timings are the layer's time (support/timing_boundaries.h).
std::vector<std::string> parse_boundaries(const std::string& file, const YAML::Node& node, ErrorList& errors) {
  std::vector<std::string> out;
  if (!node.IsDefined() || node.IsNull()) return out;
  std::string allowed;
  for (const char* const* b = kTimingBoundaries; *b; ++b) allowed += (allowed.empty() ? "" : ", ") + std::string(*b);
  if (!node.IsSequence() || node.size() == 0) {
    errors.add(where(file, node) + ": boundaries: must be a non-empty list of timing boundaries (" + allowed + ")");
    return out;
  }
  for (const auto& e : node) {
    if (!e.IsScalar() || !is_timing_boundary(e.Scalar())) {
      errors.add(where(file, e) + ": boundaries: unknown timing boundary '" + (e.IsScalar() ? e.Scalar() : std::string("?")) +
                 "' (allowed: " + allowed + ")");
      continue;
    }
    if (std::find(out.begin(), out.end(), e.Scalar()) != out.end())
      errors.add(where(file, e) + ": boundaries: '" + e.Scalar() + "' listed twice");
    else
      out.push_back(e.Scalar());
  }
  return out;
}

// Cross-field rules: one coefficient per cell; every class at every precision where it can
// occur has a dispatch term and a byte or mac term; one graph-level coefficient per term and
// precision.
void validate(const DeviceSpec& d, const std::string& file, ErrorList& errors) {
  for (size_t i = 0; i < d.coefficients.size(); ++i)
    for (size_t j = i + 1; j < d.coefficients.size(); ++j) {
      const auto& a = d.coefficients[i];
      const auto& b = d.coefficients[j];
      if (a.name == b.name) errors.add(file + ": coefficients: two coefficients named '" + a.name + "'");
      if (a.term != b.term) continue;
      if (is_graph_term(a.term)) {
        for (model::Precision p : {model::Precision::kFp16, model::Precision::kW8A16, model::Precision::kW4A16}) {
          auto has = [&](const CoefficientSpec& k) {
            if (k.precisions.empty()) return true;
            for (model::Precision x : k.precisions) if (x == p) return true;
            return false;
          };
          if (has(a) && has(b))
            errors.add(file + ": coefficients: '" + a.name + "' and '" + b.name + "' both price the " +
                       to_string(a.term) + " term at " + model::to_string(p));
        }
        continue;
      }
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
}

DeviceSpec parse(const YAML::Node& root, const std::string& file) {
  ErrorList errors;
  DeviceSpec d;
  d.source = file;
  MapReader top(file, root, "", errors);
  d.name = top.string("name", true).value_or("");
  d.identity.soc = top.string("soc", false).value_or("");
  top.string("accelerator", false);
  top.string("memory", false);
  d.dram_gbps = top.number("dram_bandwidth_gbps", true, 1e-3).value_or(1);
  d.vtcm_mb = top.number("vtcm_mb", false, 0).value_or(0);
  d.channel_pad = static_cast<int>(top.integer("channel_pad", false, 1, 1024).value_or(1));
  YAML::Node identity = top.child("identity", false);
  YAML::Node calibration = top.child("calibration", false);
  YAML::Node boundaries = top.child("boundaries", true);
  YAML::Node structure = top.child("structure", false);
  YAML::Node list = top.child("coefficients", true);
  YAML::Node hyps = top.child("hypothesis_axes", false);
  YAML::Node probes = top.child("probes", false);
  YAML::Node runtime = top.child("runtime", false);
  top.finish();
  if (!d.name.empty() && !valid_device_name(d.name))
    top.error("name", "'" + d.name + "' is not a device name (letters, digits, '.', '_' and '-'; it names database rows and files)");
  parse_identity(file, identity, d, errors);
  d.calibration = parse_calibration_files(file, calibration, errors);
  d.boundaries = parse_boundaries(file, boundaries, errors);
  d.structure = parse_structure(file, structure, "structure", Structure{}, errors);
  d.coefficients = parse_coefficient_list(file, list, "coefficients", errors);
  d.probes = parse_probes(file, probes, errors);
  d.runtime = parse_runtime(file, runtime, errors);
  validate(d, file, errors);
  d.build_index();
  // Hypotheses: the product of the axes' options (each option a partial hypothesis: structure
  // overrides, coefficients dropped and added), in axis order, the first axis varying slowest.
  if (hyps.IsDefined() && !hyps.IsNull()) {
    if (!hyps.IsSequence()) errors.add(where(file, hyps) + ": hypothesis_axes: must be a list");
    std::vector<HypothesisSpec> product = {HypothesisSpec{.structure = d.structure}};
    for (size_t i = 0; hyps.IsSequence() && i < hyps.size(); ++i) {
      const std::string key = "hypothesis_axes[" + std::to_string(i) + "]";
      MapReader ax(file, hyps[i], key, errors);
      if (!ax.ok()) continue;
      ax.string("axis", true);
      YAML::Node opts = ax.child("options", true);
      ax.finish();
      if (!opts.IsDefined() || !opts.IsSequence() || opts.size() == 0) {
        errors.add(where(file, hyps[i]) + ": " + key + ".options: must be a non-empty list");
        continue;
      }
      // Each option parsed once (its structure keys checked once), then combined with every
      // hypothesis so far.
      struct Option {
        std::string name, claim, source;
        YAML::Node structure;
        std::vector<std::string> drop;
        std::vector<CoefficientSpec> add;
      };
      std::vector<Option> options;
      for (size_t j = 0; j < opts.size(); ++j) {
        const std::string okey = key + ".options[" + std::to_string(j) + "]";
        MapReader m(file, opts[j], okey, errors);
        if (!m.ok()) continue;
        Option o;
        o.name = m.string("name", true).value_or("");
        o.claim = m.string("claim", true).value_or("");
        o.source = m.string("source", true).value_or("");
        o.structure = m.child("structure", false);
        parse_structure(file, o.structure, okey + ".structure", d.structure, errors);
        YAML::Node drop = m.child("drop", false);
        if (drop.IsDefined() && drop.IsSequence())
          for (const auto& e : drop) o.drop.push_back(e.Scalar());
        o.add = parse_coefficient_list(file, m.child("add", false), okey + ".add", errors);
        m.finish();
        options.push_back(std::move(o));
      }
      if (static_cast<int64_t>(product.size() * options.size()) > model::limits::kMaxHypotheses) {
        errors.add(where(file, hyps[i]) + ": " + key + ": the axes so far combine into " +
                   std::to_string(product.size()) + " x " + std::to_string(options.size()) +
                   " hypotheses, more than " + std::to_string(model::limits::kMaxHypotheses) +
                   " (each combination of one option per axis is fitted); drop options or axes");
        break;
      }
      std::vector<HypothesisSpec> next;
      for (const HypothesisSpec& base : product)
        for (const Option& o : options) {
          HypothesisSpec h = base;
          h.name += (h.name.empty() ? "" : "/") + o.name;
          h.claim += (h.claim.empty() ? "" : "; ") + o.claim;
          h.source += (h.source.empty() ? "" : "; ") + o.source;
          ErrorList checked;  // reported above
          h.structure = parse_structure(file, o.structure, key, h.structure, checked);
          h.drop.insert(h.drop.end(), o.drop.begin(), o.drop.end());
          h.add.insert(h.add.end(), o.add.begin(), o.add.end());
          next.push_back(std::move(h));
        }
      product = std::move(next);
    }
    errors.throw_if_any();
    d.hypotheses = std::move(product);
    for (const HypothesisSpec& h : d.hypotheses) {
      try {
        with_hypothesis(d, h);
      } catch (const Error& e) {
        errors.add(e.what());
      }
    }
  }
  errors.throw_if_any();
  return d;
}

}  // namespace

DeviceSpec with_hypothesis(const DeviceSpec& base, const HypothesisSpec& h) {
  ErrorList errors;
  DeviceSpec d = base;
  d.index_table.clear();  // rebuilt below for this hypothesis's coefficients
  d.hypotheses.clear();
  d.hypothesis = h.name;
  d.structure = h.structure;
  for (const std::string& name : h.drop) {
    auto it = std::find_if(d.coefficients.begin(), d.coefficients.end(),
                           [&](const CoefficientSpec& k) { return k.name == name; });
    if (it == d.coefficients.end())
      errors.add(base.source + ": hypothesis '" + h.name + "': drop: no coefficient named '" + name + "'");
    else
      d.coefficients.erase(it);
  }
  d.coefficients.insert(d.coefficients.end(), h.add.begin(), h.add.end());
  validate(d, base.source + ": hypothesis '" + h.name + "'", errors);
  errors.throw_if_any();
  d.build_index();
  return d;
}

DeviceSpec load_device(const std::string& path) { return parse(load_yaml_file(path), path); }
DeviceSpec load_device_text(const std::string& text, const std::string& name) {
  return parse(load_yaml_text(text, name), name);
}
std::string device_file(const std::string& relative) {
  if (relative.empty() || relative.front() == '/') return relative;
  return config_path(relative);
}

std::vector<std::string> known_devices() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(config_path("devices"), ec))
    if (e.path().extension() == ".yaml") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

DeviceSpec load_device_named(const std::string& name_or_path) {
  const std::string suffix = ".yaml";
  if (name_or_path.size() > suffix.size() &&
      name_or_path.compare(name_or_path.size() - suffix.size(), suffix.size(), suffix) == 0)
    return load_device(name_or_path);
  // A name: one of the shipped specs (a name cannot step out of configs/devices/).
  const std::vector<std::string> known = known_devices();
  if (std::find(known.begin(), known.end(), name_or_path) == known.end()) {
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    throw Error("--device: unknown device '" + name_or_path + "' (known: " + list +
                "; or give the path of a device .yaml)");
  }
  return load_device(config_path("devices/" + name_or_path + ".yaml"));
}

}  // namespace layoutx::costmodel
