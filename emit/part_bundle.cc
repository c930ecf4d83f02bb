// A part's device job bundle: the layer bundle's files (emit/bundle.cc) for a graph of several
// layers.
#include <yaml-cpp/yaml.h>

#include "emit/part.h"
#include "model/design_space.h"

namespace layoutx::emit {

BundleSize part_bundle_size(const Part& p, int samples) {
  BundleSize s;
  s.samples = samples;
  for (const auto& m : p.layers) s.onnx += bundle_size(*m.graph, 0).onnx;
  const IoSignature sig = part_io_signature(p);
  for (const auto* ts : {&sig.inputs, &sig.outputs})
    for (const auto& t : *ts) s.per_sample += 4 * model::numel(t.shape);
  return s;
}

BundleFiles write_part_bundle(const Part& p, const std::string& dir, const BundleOptions& opt,
                              const std::string& ingest_hint) {
  const auto m = part_to_onnx(p);
  const auto& first = *p.layers.front().graph;
  BundleContent c;
  c.name = p.name;
  c.what = "one part (" + std::to_string(p.layers.size()) + " decoder layers in one graph), one decode step";
  c.onnx = &m;
  c.sig = part_io_signature(p);
  c.samples = part_step_io(p, opt.calibration_samples, opt.seed);
  c.precision = first.variant.precision();
  c.key = p.name + ": layers " + std::to_string(p.layers.front().index) + "-" + std::to_string(p.layers.back().index);
  c.identity = [&](YAML::Emitter& y) {
    y << YAML::Key << "model" << YAML::Value << opt.model_name;
    y << YAML::Key << "part" << YAML::Value << p.name;
    y << YAML::Key << "ctx" << YAML::Value << first.layer.context;
    y << YAML::Key << "layers" << YAML::Value << YAML::BeginSeq;
    for (const auto& l : p.layers)
      y << YAML::Flow << YAML::BeginMap << YAML::Key << "index" << YAML::Value << l.index << YAML::Key << "type"
        << YAML::Value << model::to_string(l.graph->layer.type) << YAML::Key << "variant_key" << YAML::Value
        << l.graph->variant.key(model::AxisScope(l.graph->layer)) << YAML::EndMap;
    y << YAML::EndSeq;
  };
  c.ingest_aihub = c.ingest_qnn = ingest_hint;
  return write_bundle_content(c, dir, opt);
}

}  // namespace layoutx::emit
