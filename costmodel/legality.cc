#include "costmodel/legality.h"

#include "support/error.h"
#include "support/yaml_reader.h"

namespace layoutx::costmodel {

const char* to_string(Compiles c) {
  switch (c) {
    case Compiles::kYes: return "yes";
    case Compiles::kNo: return "no";
    case Compiles::kUnknown: return "unknown";
  }
  return "?";
}

namespace {

bool parse_kind(const std::string& s, model::OpKind& out) {
  for (int k = static_cast<int>(model::OpKind::kInput); k <= static_cast<int>(model::OpKind::kReshape); ++k)
    if (s == model::to_string(static_cast<model::OpKind>(k))) {
      out = static_cast<model::OpKind>(k);
      return true;
    }
  return false;
}

Outcome read_outcome(MapReader& m, bool allow_unknown_result) {
  Outcome o;
  if (auto r = m.string("result", true)) {
    if (*r == "ok") o.result = Compiles::kYes;
    else if (*r == "fail") o.result = Compiles::kNo;
    else if (allow_unknown_result && *r == "unknown") o.result = Compiles::kUnknown;
    else m.error("result", "must be ok or fail, got '" + *r + "'");
  }
  o.exit_code = static_cast<int>(m.integer("exit_code", false, 0, 255).value_or(0));
  o.evidence = m.string("evidence", true).value_or("");
  m.finish();
  return o;
}

RuleSet parse(const YAML::Node& root, const std::string& file) {
  ErrorList errors;
  RuleSet rs;
  rs.source = file;
  MapReader top(file, root, "", errors);
  top.integer("version", true, 1, 1);
  YAML::Node def = top.child("default", true);
  if (def.IsDefined() && !def.IsNull()) {
    MapReader m(file, def, "default", errors);
    rs.default_outcome = read_outcome(m, true);
  }
  YAML::Node forms = top.child("forms", true);
  top.finish();
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
      if (auto k = mm.string("kind", true))
        if (!parse_kind(*k, f.match.kind)) mm.error("kind", "unknown op kind '" + *k + "'");
      if (auto k = mm.string("feeds", false)) {
        model::OpKind fk;
        if (parse_kind(*k, fk)) f.match.feeds = fk;
        else mm.error("feeds", "unknown op kind '" + *k + "'");
      }
      f.match.min_broadcast_axes = static_cast<int>(mm.integer("min_broadcast_axes", false, 0, 8).value_or(0));
      f.match.all_operands_broadcast = mm.boolean("all_operands_broadcast", false).value_or(false);
      mm.finish();
    }
    YAML::Node oc = m.child("outcomes", true);
    if (oc.IsDefined() && oc.IsMap()) {
      for (auto it = oc.begin(); it != oc.end(); ++it) {
        const std::string p = it->first.Scalar();
        try {
          model::Precision prec = model::parse_precision(p);
          MapReader om(file, it->second, path + ".outcomes." + p, errors);
          f.outcomes[prec] = read_outcome(om, false);
        } catch (const Error& e) {
          errors.add(where(file, it->first) + ": " + path + ".outcomes: " + e.what());
        }
      }
    } else if (oc.IsDefined() && !oc.IsNull()) {
      m.error("outcomes", "must be a mapping of precision: {result, evidence}");
    }
    m.finish();
    rs.forms.push_back(f);
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

bool matches(const FormMatch& m, const model::LayerGraph& g, model::Vertex v) {
  if (g.op(v).kind != m.kind) return false;
  if (m.feeds) {
    std::vector<model::Vertex> users;
    users_through_views(g, v, users);
    bool any = false;
    for (model::Vertex u : users) any |= g.op(u).kind == *m.feeds;
    if (!any) return false;
  }
  if (m.min_broadcast_axes > 0 || m.all_operands_broadcast) {
    Broadcast b = broadcast_of(g, v);
    if (b.axes < m.min_broadcast_axes) return false;
    if (m.all_operands_broadcast && !b.all_operands) return false;
  }
  return true;
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

Legality check_legality(const RuleSet& rules, const model::LayerGraph& g, const std::vector<LoweredOp>& ops) {
  Legality no, unknown;
  no.compiles = Compiles::kNo;
  unknown.compiles = Compiles::kUnknown;
  const model::Precision p = g.variant.precision;
  for (const FormRule& f : rules.forms)
    for (const LoweredOp& op : ops)
      for (model::Vertex v : op.vertices) {
        if (!matches(f.match, g, v)) continue;
        const model::OpNode& n = g.op(v);
        const std::string what = f.id + ": " + n.name + " (" + model::to_string(n.kind) + " " + model::to_string(n.shape) +
                                 ", " + f.description + ") at " + model::to_string(p);
        auto it = f.outcomes.find(p);
        if (it == f.outcomes.end()) {
          unknown.reasons.push_back(what + ": never tried (" + rules.source + ")");
        } else if (it->second.result == Compiles::kNo) {
          std::string r = what + ": fails";
          if (it->second.exit_code) r += ", converter exit code " + std::to_string(it->second.exit_code);
          no.reasons.push_back(r + "; evidence: " + it->second.evidence);
        }
      }
  if (!no.reasons.empty()) return no;
  if (!unknown.reasons.empty()) return unknown;
  Legality yes;
  yes.compiles = rules.default_outcome.result;
  return yes;
}

}  // namespace layoutx::costmodel
