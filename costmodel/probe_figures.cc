#include "costmodel/probe_figures.h"

#include <map>

#include "costmodel/predictor_factory.h"
#include "model/builder.h"
#include "model/graph_transforms.h"
#include "model/model_loader.h"

namespace layoutx::costmodel {

std::vector<ProbeFigures> probe_figures(const HypothesisSet& set, const Predictor& pr) {
  std::vector<ProbeFigures> out;
  if (set.fits.empty() || set.fits.front().device.probes.empty()) return out;
  const DeviceSpec& device = set.fits.front().device;
  const auto every = predictor_from_hypotheses(set, device, 1.0);
  std::map<std::string, model::ModelSpec> models;
  for (const ProbeSpec& p : device.probes) {
    auto it = models.find(p.model);
    if (it == models.end()) it = models.emplace(p.model, model::load_model(p.model)).first;
    model::LayerGraph g = model::build_layer_graph(it->second.layer(p.layer, p.context), p.variant);
    if (p.cache_in_u16) model::cache_enters_in_u16(g);
    out.push_back({&p, every->predict_each(g), pr.predict(g)});
  }
  return out;
}

}  // namespace layoutx::costmodel
