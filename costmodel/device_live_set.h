// The VTCM live set as a device holds it: the live-set analysis (costmodel/live_set.h) with the
// device's channel padding and cache-sized threshold, and the knees its structure and hypotheses
// put on the VTCM left for the cache-sized tensors (Structure::vtcm_budget_mb, in MiB). What
// `layoutx graph` shows beside each op.
#pragma once
#include <string>
#include <vector>

#include "costmodel/device_spec.h"
#include "costmodel/live_set.h"

namespace layoutx::costmodel {

struct DeviceLiveSet {
  std::string device;
  double min_kib = 0;             // a tensor is cache-sized from this many KiB (tiled)
  std::vector<double> knees_mib;  // distinct, ascending; empty: the device models no VTCM
  LiveSet live;                   // in place (the base structure): no re-laid copies
};

// The VTCM budgets (MiB) of the device's structure and of each hypothesis, distinct and
// ascending; a budget of 0 (no VTCM modelled) is left out.
std::vector<double> vtcm_knees_mib(const DeviceSpec& d);

// `g`'s live set under `d`'s tiling and threshold, with the device's knees. In place: under
// cache-relaid a re-laid copy adds to it (README).
DeviceLiveSet device_live_set(const model::LayerGraph& g, const DeviceSpec& d);

}  // namespace layoutx::costmodel
