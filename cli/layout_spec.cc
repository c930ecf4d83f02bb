#include "cli/layout_spec.h"

#include "explorer/design_space.h"
#include "support/error.h"

namespace layoutx::cli {

namespace {

model::LayerType type_in_model(const model::ModelSpec& m, const std::string& name, const std::string& flag) {
  model::LayerType t = model::parse_layer_type(name, flag);
  if (m.count(t) == 0)
    throw Error(flag + ": " + m.name + " has no " + name + " layers (its " + std::to_string(m.num_layers()) +
                " layers are all " + (t == model::LayerType::kSliding ? "full" : "sliding") + ")");
  return t;
}

}  // namespace

TypedSet parse_typed_set(const model::ModelSpec& m, const std::string& s) {
  auto dot = s.find('.');
  auto eq = s.find('=');
  if (dot == std::string::npos || eq == std::string::npos || eq < dot)
    throw Error("--set: expected TYPE.axis=value (e.g. sliding.returns=window), got '" + s + "'");
  TypedSet r{type_in_model(m, s.substr(0, dot), "--set " + s), s.substr(dot + 1, eq - dot - 1), s.substr(eq + 1)};
  model::Variant probe;
  try {
    probe.set(r.axis, r.value);
  } catch (const Error& e) {
    throw Error("--set " + s + ": " + e.what());
  }
  return r;
}

std::set<model::LayerType> named_types(const model::ModelSpec& m, const std::vector<std::string>& layouts,
                                       const std::vector<std::string>& sets) {
  std::set<model::LayerType> named;
  for (model::LayerType t : {model::LayerType::kSliding, model::LayerType::kFull}) {
    if (m.count(t) == 0) continue;
    const std::string name = model::to_string(t);
    for (const auto& l : layouts)
      for (size_t at = l.find(name + "="); at != std::string::npos; at = l.find(name + "=", at + 1))
        if (at == 0 || l[at - 1] == ',') named.insert(t);
    for (const auto& s : sets)
      if (s.rfind(name + ".", 0) == 0) named.insert(t);
  }
  return named;
}

explorer::Assignment parse_assignment(const model::ModelSpec& m, model::Precision p,
                                      const std::vector<std::string>& layouts, const std::vector<std::string>& sets) {
  explorer::Assignment a;
  for (auto t : {model::LayerType::kSliding, model::LayerType::kFull})
    if (m.count(t)) a[t] = explorer::incumbent(t, p, model::AxisScope(m));
  // Tokens split on commas; a token "sliding=..." or "full=..." starts an entry, others continue
  // the previous entry's variant key.
  std::vector<std::pair<std::string, std::string>> entries;
  for (const auto& l : layouts) {
    size_t start = 0;
    while (start <= l.size()) {
      size_t comma = l.find(',', start);
      std::string tok = l.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      auto eq = tok.find('=');
      std::string head = eq == std::string::npos ? "" : tok.substr(0, eq);
      if (head == "sliding" || head == "full") entries.emplace_back(head, tok.substr(eq + 1));
      else if (!entries.empty()) entries.back().second += "," + tok;
      else throw Error("--layout: expected TYPE=LAYOUT (e.g. sliding=ring,full=ring), got '" + tok + "'");
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  // A key or --set that names a precision other than --precision is an error (the step is
  // priced at one precision; silently repricing the key would answer another question).
  auto same_precision = [&](const std::string& what, model::Precision named) {
    if (named != p)
      throw Error(what + ": names precision=" + model::to_string(named) + " but --precision is " + model::to_string(p) +
                  "; drop precision from the key or pass --precision " + model::to_string(named));
  };
  for (const auto& [type, layout] : entries) {
    model::LayerType t = type_in_model(m, type, "--layout " + type + "=" + layout);
    try {
      a[t] = model::parse_variant(layout, {}, model::AxisScope(m));  // the model's own axes where the text is silent
    } catch (const Error& e) {
      throw Error("--layout " + type + "=" + layout + ": " + e.what());
    }
    if (layout.find("precision=") != std::string::npos) same_precision("--layout " + type + "=" + layout, a[t].precision());
  }
  for (const auto& s : sets) {
    TypedSet ts = parse_typed_set(m, s);
    a[ts.type].set(ts.axis, ts.value);
    if (ts.axis == "precision") same_precision("--set " + s, a[ts.type].precision());
  }
  for (auto& [t, v] : a) {
    v.set(p);
    try {
      v.validate();
    } catch (const Error& e) {
      throw Error(std::string("--layout/--set (") + model::to_string(t) + "): " + e.what());
    }
  }
  return a;
}

}  // namespace layoutx::cli
