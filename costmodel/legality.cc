#include "costmodel/legality.h"

#include "costmodel/axis_records.h"
#include "model/analysis.h"

#include "support/error.h"
#include "support/yaml_reader.h"

namespace layoutx::costmodel {

const char* to_string(Compiles c) {
  switch (c) {
    case Compiles::kYes: return "yes";
    case Compiles::kNo: return "no";
    case Compiles::kUnknown: return "unknown";
    case Compiles::kContested: return "contested";
  }
  return "?";
}

namespace {

int severity(Compiles c) {
  switch (c) {
    case Compiles::kYes: return 0;
    case Compiles::kUnknown: return 1;
    case Compiles::kContested: return 2;
    case Compiles::kNo: return 3;
  }
  return 3;
}

}  // namespace

Compiles worse(Compiles a, Compiles b) { return severity(a) >= severity(b) ? a : b; }

Compiles combine(const std::vector<Record>& records) {
  bool ok = false, fail = false;
  for (const Record& r : records) (r.result == Compiles::kNo ? fail : ok) = true;
  if (ok && fail) return Compiles::kContested;
  if (fail) return Compiles::kNo;
  if (ok) return Compiles::kYes;
  return Compiles::kUnknown;
}

std::string describe(const Record& r) {
  std::string s = r.result == Compiles::kNo ? "fail" : "ok";
  if (r.exit_code) s += ", converter exit code " + std::to_string(r.exit_code);
  return s + " (" + r.source + ": " + r.evidence + ")";
}

namespace {

bool parse_kind(const std::string& s, model::OpKind& out) {
  for (int k = static_cast<int>(model::OpKind::kInput); k <= static_cast<int>(model::OpKind::kConv); ++k)
    if (s == model::to_string(static_cast<model::OpKind>(k))) {
      out = static_cast<model::OpKind>(k);
      return true;
    }
  return false;
}

std::optional<model::OpKind> read_kind(MapReader& m, std::string_view key, bool required) {
  auto k = m.string(key, required);
  if (!k) return std::nullopt;
  model::OpKind kind;
  if (parse_kind(*k, kind)) return kind;
  m.error(key, "unknown op kind '" + *k + "'");
  return std::nullopt;
}

// One record: {result: ok|fail, exit_code, source, evidence}; `precision` too when `with_precision`.
Record read_record(MapReader& m, std::optional<model::Precision>* precision) {
  Record r;
  if (precision) {
    if (auto p = m.string("precision", true)) {
      try {
        *precision = model::parse_precision(*p);
      } catch (const Error& e) {
        m.error("precision", e.what());
      }
    }
  }
  if (auto s = m.string("result", true)) {
    if (*s == "ok") r.result = Compiles::kYes;
    else if (*s == "fail") r.result = Compiles::kNo;
    else m.error("result", "must be ok or fail, got '" + *s + "' (disagreement is two records, not a result)");
  }
  r.exit_code = static_cast<int>(m.integer("exit_code", false, 0, 255).value_or(0));
  if (r.exit_code && r.result != Compiles::kNo) m.error("exit_code", "only a failed conversion has an exit code");
  r.source = m.string("source", true).value_or("");
  r.evidence = m.string("evidence", true).value_or("");
  m.finish();
  return r;
}

RuleSet parse(const YAML::Node& root, const std::string& file) {
  ErrorList errors;
  RuleSet rs;
  rs.source = file;
  MapReader top(file, root, "", errors);
  top.integer("version", true, 2, 2);
  YAML::Node defaults = top.child("defaults", true);
  YAML::Node forms = top.child("forms", true);
  const auto axis_records = top.string("axis_records", false);
  top.finish();
  if (axis_records) {
    const auto slash = file.find_last_of('/');
    const std::string path = (slash == std::string::npos ? std::string() : file.substr(0, slash + 1)) + *axis_records;
    try {
      rs.axis_records = load_axis_records(path);
    } catch (const Error& e) {
      errors.add(where(file, root["axis_records"]) + ": axis_records: " + e.what());
    }
  }
  if (defaults.IsDefined() && defaults.IsMap()) {
    for (auto it = defaults.begin(); it != defaults.end(); ++it) {
      const std::string p = it->first.Scalar();
      try {
        model::Precision prec = model::parse_precision(p);
        MapReader m(file, it->second, "defaults." + p, errors);
        if (m.ok()) rs.defaults[prec].push_back(read_record(m, nullptr));
      } catch (const Error& e) {
        errors.add(where(file, it->first) + ": defaults: " + e.what());
      }
    }
  } else if (defaults.IsDefined() && !defaults.IsNull()) {
    errors.add(where(file, defaults) + ": defaults: must be a mapping of precision: {result, source, evidence}");
  }
  if (forms.IsDefined() && !forms.IsNull() && !forms.IsSequence()) errors.add(where(file, forms) + ": forms: must be a list");
  for (size_t i = 0; forms.IsSequence() && i < forms.size(); ++i) {
    const std::string path = "forms[" + std::to_string(i) + "]";
    MapReader m(file, forms[i], path, errors);
    if (!m.ok()) continue;
    FormRule f;
    f.id = m.string("id", true).value_or("");
    f.description = m.string("description", true).value_or("");
    YAML::Node mt = m.child("match", true);
    if (mt.IsDefined() && !mt.IsNull()) {
      MapReader mm(file, mt, path + ".match", errors);
      if (auto k = read_kind(mm, "kind", true)) f.match.kind = *k;
      f.match.feeds = read_kind(mm, "feeds", false);
      f.match.operand_kind = read_kind(mm, "operand_kind", false);
      if (auto g = mm.string("gelu", false)) {
        if (*g == model::to_string(model::GeluForm::kErf)) f.match.gelu = model::GeluForm::kErf;
        else if (*g == model::to_string(model::GeluForm::kTanh)) f.match.gelu = model::GeluForm::kTanh;
        else mm.error("gelu", "must be erf or tanh, got '" + *g + "'");
      }
      f.match.min_broadcast_axes = static_cast<int>(mm.integer("min_broadcast_axes", false, 0, 8).value_or(0));
      f.match.all_operands_broadcast = mm.boolean("all_operands_broadcast", false).value_or(false);
      mm.finish();
    }
    YAML::Node recs = m.child("records", true);
    if (recs.IsDefined() && recs.IsSequence()) {
      for (size_t j = 0; j < recs.size(); ++j) {
        MapReader rm(file, recs[j], path + ".records[" + std::to_string(j) + "]", errors);
        if (!rm.ok()) continue;
        std::optional<model::Precision> p;
        Record r = read_record(rm, &p);
        if (p) f.records[*p].push_back(std::move(r));
      }
    } else if (recs.IsDefined() && !recs.IsNull()) {
      m.error("records", "must be a list of {precision, result, source, evidence}");
    }
    m.finish();
    rs.forms.push_back(std::move(f));
  }
  errors.throw_if_any();
  return rs;
}

// Users of v, looking through Reshape views.
void users_through_views(const model::LayerGraph& g, model::Vertex v, std::vector<model::Vertex>& out) {
  for (model::Vertex u : g.users(v)) {
    if (g.op(u).kind == model::OpKind::kReshape) users_through_views(g, u, out);
    else out.push_back(u);
  }
}

// The op behind operand u, looking through Reshape views.
model::Vertex through_views(const model::LayerGraph& g, model::Vertex u) {
  while (g.op(u).kind == model::OpKind::kReshape && !g.operands(u).empty()) u = g.operands(u)[0];
  return u;
}

// True if v is a projection: a MatMul by a weight.
bool is_projection(const model::LayerGraph& g, model::Vertex v) {
  if (g.op(v).kind != model::OpKind::kMatMul) return false;
  for (model::Vertex u : g.operands(v))
    if (model::is_folded_weight(g, u)) return true;
  return false;
}

// The GELU form the model's checkpoint defines (erf for gelu, tanh for gelu_tanh); none for
// SiLU models.
std::optional<model::GeluForm> own_gelu(const model::LayerSpec& L) {
  switch (L.activation) {
    case model::Activation::kGelu: return model::GeluForm::kErf;
    case model::Activation::kGeluTanh: return model::GeluForm::kTanh;
    case model::Activation::kSilu: return std::nullopt;
  }
  return std::nullopt;
}

// A GELU-form record is about *changing* a model's GELU to that form. Why: the model's own form
// is what its exporter builds from the checkpoint in every export of it, so it is one of "the
// ops every variant has" (the defaults); the records of configs/rules/ were taken on Spark
// exports, where tanh was a rewrite of its erf GELU. So a Gelu op in the model's own form does
// not match a gelu rule (Gemma's tanh GELU is judged by the defaults), and a Gelu changed to a
// form no rule records is unknown (check_legality: gelu-change).
bool is_own_gelu(const model::LayerGraph& g, const model::OpNode& n) {
  return n.kind == model::OpKind::kGelu && own_gelu(g.layer) == n.gelu;
}

bool matches(const FormMatch& m, const model::LayerGraph& g, model::Vertex v) {
  const model::OpNode& n = g.op(v);
  if (n.kind != m.kind) return false;
  if (m.gelu && n.gelu != *m.gelu) return false;
  if (m.gelu && is_own_gelu(g, n)) return false;
  if (m.feeds) {
    std::vector<model::Vertex> users;
    users_through_views(g, v, users);
    bool any = false;
    for (model::Vertex u : users) any |= g.op(u).kind == *m.feeds;
    if (!any) return false;
  }
  if (m.operand_kind) {
    // A MatMul operand is a computed product (the score-join's score vectors), not a
    // projection: the v_proj output of a family with separate projections feeding the key
    // join is the new entry, as the slice of Spark's fused q_k_v_proj is.
    bool any = false;
    for (model::Vertex u : g.operands(v)) {
      const model::Vertex w = through_views(g, u);
      any |= g.op(w).kind == *m.operand_kind && !is_projection(g, w);
    }
    if (!any) return false;
  }
  if (m.min_broadcast_axes > 0 || m.all_operands_broadcast) {
    Broadcast b = broadcast_of(g, v);
    if (b.axes < m.min_broadcast_axes) return false;
    if (m.all_operands_broadcast && !b.all_operands) return false;
  }
  return true;
}

// "yes" / "no: fail, ... (source: evidence); ..." / "never tried".
std::string records_text(Compiles c, const std::vector<Record>& records) {
  if (records.empty()) return std::string(to_string(c)) + ": never tried";
  std::string s = std::string(to_string(c)) + ": ";
  for (size_t i = 0; i < records.size(); ++i) s += (i ? "; " : "") + describe(records[i]);
  return s;
}

}  // namespace

RuleSet load_rules(const std::string& path) { return parse(load_yaml_file(path), path); }
RuleSet load_rules_text(const std::string& text, const std::string& name) { return parse(load_yaml_text(text, name), name); }

Broadcast broadcast_of(const model::LayerGraph& g, model::Vertex v) {
  const model::Shape& out = g.op(v).shape;
  const size_t r = out.size();
  std::vector<bool> axis(r, false);
  Broadcast b;
  b.all_operands = true;
  int operands = 0;
  for (model::Vertex u : g.operands(v)) {
    const model::OpNode& o = g.op(u);
    if (o.kind == model::OpKind::kConstant) continue;
    ++operands;
    bool this_one = false;
    for (size_t i = 0; i < r; ++i) {
      const size_t lead = r - o.shape.size();
      const int64_t d = i >= lead ? o.shape[i - lead] : 1;
      if (d == 1 && out[i] > 1) {
        axis[i] = true;
        this_one = true;
      }
    }
    b.all_operands = b.all_operands && this_one;
  }
  if (operands == 0) b.all_operands = false;
  for (bool a : axis) b.axes += a;
  return b;
}

namespace {

// The first op of the lowered graph that has the form, if any.
std::optional<model::Vertex> first_match(const FormMatch& m, const model::LayerGraph& g, const std::vector<LoweredOp>& ops) {
  for (const LoweredOp& op : ops)
    for (model::Vertex v : op.vertices)
      if (matches(m, g, v)) return v;
  return std::nullopt;
}

}  // namespace

Legality check_legality(const RuleSet& rules, const model::LayerGraph& g, const std::vector<LoweredOp>& ops) {
  const model::Precision p = g.variant.precision();
  const std::string at_p = std::string(" at ") + model::to_string(p);
  static const std::vector<Record> kNone;
  auto records_at = [&](const std::map<model::Precision, std::vector<Record>>& m) -> const std::vector<Record>& {
    auto it = m.find(p);
    return it == m.end() ? kNone : it->second;
  };
  // (outcome, reason) per source of an outcome that is not yes; reasons[0] explains the result.
  std::vector<std::pair<Compiles, std::string>> found;
  const std::vector<Record>& defaults = records_at(rules.defaults);
  Compiles result = combine(defaults);
  if (result != Compiles::kYes)
    found.emplace_back(result, "defaults (the ops every variant has)" + at_p + ": " + records_text(result, defaults) +
                                   " (" + rules.source + ")");
  for (const FormRule& f : rules.forms) {
    auto v = first_match(f.match, g, ops);  // a form is one outcome, named by its first op
    if (!v) continue;
    const std::vector<Record>& records = records_at(f.records);
    const Compiles c = combine(records);
    result = worse(result, c);
    if (c == Compiles::kYes) continue;
    const model::OpNode& n = g.op(*v);
    found.emplace_back(c, f.id + ": " + n.name + " (" + model::to_string(n.kind) + " " + model::to_string(n.shape) +
                              ", " + f.description + ")" + at_p + ": " + records_text(c, records) +
                              (records.empty() ? " (" + rules.source + ")" : ""));
  }
  // A GELU changed from the model's own form to one no rule records: never tried.
  for (const LoweredOp& op : ops)
    for (model::Vertex v : op.vertices) {
      const model::OpNode& n = g.op(v);
      if (n.kind != model::OpKind::kGelu || is_own_gelu(g, n)) continue;
      bool recorded = false;
      for (const FormRule& f : rules.forms) recorded |= f.match.gelu == n.gelu && matches(f.match, g, v);
      if (recorded) continue;
      result = worse(result, Compiles::kUnknown);
      found.emplace_back(Compiles::kUnknown, "gelu-change: " + n.name + " (Gelu " + model::to_string(n.gelu) +
                                                 ", the model's own GELU is " +
                                                 model::to_string(g.layer.activation) + ")" + at_p +
                                                 ": unknown: never tried (" + rules.source + ")");
    }
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& a, const auto& b) { return worse(a.first, b.first) == a.first && a.first != b.first; });
  Legality l;
  l.compiles = result;
  for (auto& [c, r] : found) l.reasons.push_back(std::move(r));
  check_axis_records(rules.axis_records, g.variant, l);
  return l;
}

}  // namespace layoutx::costmodel
