#include "costmodel/probe_spec.h"

#include <yaml-cpp/yaml.h>

#include "model/limits.h"
#include "support/yaml_reader.h"

namespace layoutx::costmodel {

std::vector<ProbeSpec> parse_probes(const std::string& file, const YAML::Node& node, ErrorList& errors) {
  std::vector<ProbeSpec> out;
  if (!node.IsDefined() || node.IsNull()) return out;
  if (!node.IsSequence()) {
    errors.add(where(file, node) + ": probes: must be a list of {label, model, layer, ctx, variant}");
    return out;
  }
  for (size_t i = 0; i < node.size(); ++i) {
    MapReader m(file, node[i], "probes[" + std::to_string(i) + "]", errors);
    if (!m.ok()) continue;
    ProbeSpec p;
    p.where = where(file, node[i]);
    p.label = m.string("label", true).value_or("");
    p.model = m.string("model", true).value_or("");
    if (auto l = m.string("layer", true)) {
      try {
        p.layer = model::parse_layer_type(*l);
      } catch (const Error& e) {
        m.error("layer", e.what());
      }
    }
    p.context = static_cast<int>(m.integer("ctx", true, model::limits::kMinContext, model::limits::kMaxContext).value_or(0));
    if (auto v = m.string("variant", true)) {
      try {
        p.variant = model::parse_variant(*v);
      } catch (const Error& e) {
        m.error("variant", e.what());
      }
    }
    p.cache_in_u16 = m.boolean("cache_in_u16", false).value_or(false);
    m.finish();
    for (const ProbeSpec& q : out)
      if (!p.label.empty() && q.label == p.label) m.error("label", "'" + p.label + "' is the label of an earlier probe");
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace layoutx::costmodel
