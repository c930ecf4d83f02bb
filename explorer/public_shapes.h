// Ratios within one source's per-graph timings (issue 36; ../shared/docs/public-timings.md, caveat
// 2: "use ratios within a chip"): a third party's part-by-part timings of one export on one chip
// (T1: Qwen3-4B's Genie bundle on an X2 Elite, each part at several contexts) divided by one of
// them. The chip's factor and the exporter's term cancel in a ratio, so it checks the device's
// physics (how a part's time grows with the context; the LM-head part, the embedding part, against
// a plain one) without fitting either. A check, not a fit: nothing is weighed or fitted on them.
#pragma once
#include <string>
#include <vector>

#include "costmodel/predictor.h"
#include "costmodel/public_records.h"
#include "costmodel/runtime_spec.h"

namespace layoutx::explorer {

struct ShapeRatio {
  const costmodel::PublicRecord* record = nullptr;
  double published = 0;        // the record's ms over the reference's
  double predicted = 0;        // the mixture's: its members' ratios, weighted mean
  double low = 0, high = 0;    // the members' ratios: weighted 5% and 95% (equal to predicted for one calibration)
  double device_ms = 0;        // the part on the device (the mixture's members, weighted mean)
};

// One source's records on one chip: id, model, chip and the reference all its ratios divide by
// (its first priced record whose part holds decoder layers, in the file's order).
struct ShapeSet {
  std::string id, model, chip;
  const costmodel::PublicRecord* reference = nullptr;
  double reference_device_ms = 0;
  std::vector<ShapeRatio> ratios;  // every other priced record of the set
  std::vector<std::string> approximations;  // the reference's question's (shared by the set)
  std::vector<std::pair<const costmodel::PublicRecord*, std::string>> not_priced;  // and why
};

// Every set of per-graph decode timings in `t` (graph_time records naming their part), each
// record's part priced on the device under each member of `mixture` (one calibration: itself).
// A set with fewer than two priced records has no ratio and is left out.
std::vector<ShapeSet> public_shape_ratios(const costmodel::Predictor& mixture, const costmodel::PublicTimings& t,
                                          const costmodel::RuntimeSpec& runtime, const std::string& chip);

}  // namespace layoutx::explorer
