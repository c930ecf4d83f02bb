#include "costmodel/device_live_set.h"

#include <set>

namespace layoutx::costmodel {

std::vector<double> vtcm_knees_mib(const DeviceSpec& d) {
  std::set<double> knees;
  if (d.structure.vtcm_budget_mb() > 0) knees.insert(d.structure.vtcm_budget_mb());
  for (const auto& h : d.hypotheses)
    if (h.structure.vtcm_budget_mb() > 0) knees.insert(h.structure.vtcm_budget_mb());
  return {knees.begin(), knees.end()};
}

DeviceLiveSet device_live_set(const model::LayerGraph& g, const DeviceSpec& d) {
  DeviceLiveSet v;
  v.device = d.name;
  v.min_kib = d.structure.live_min_kb();
  v.knees_mib = vtcm_knees_mib(d);
  v.live = live_set(g, d.channel_pad, static_cast<int64_t>(d.structure.live_min_kb() * 1024));
  return v;
}

}  // namespace layoutx::costmodel
