// Ratios within one source's per-graph timings (issue 36; ../shared/docs/public-timings.md, caveat
// 2: "use ratios within a chip"): a third party's part-by-part timings of one export on one chip
// (T1: Qwen3-4B's Genie bundle on an X2 Elite, each part at several contexts) divided by one of
// them. The chip's factor and the exporter's term cancel in a ratio, so it checks the device's
// physics (how a part's time grows with the context; the LM-head part, the embedding part, against
// a plain one) without fitting either. The ratios fit nothing; the joint calibration
// (explorer/public_joint.h) weighs the hypotheses with the plain parts' times, each set under a
// level of its own (price_public_parts below).
#pragma once
#include <string>
#include <vector>

#include "costmodel/predictor.h"
#include "costmodel/public_records.h"
#include "costmodel/runtime_spec.h"
#include "explorer/member_predictor.h"

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

// One source's per-graph records on one chip, each priced under every member of a mixture.
struct PricedPart {
  const costmodel::PublicRecord* record = nullptr;
  std::vector<double> member_ms;  // the part on the device, per member (one calibration: one entry)
  bool plain = false;             // decoder layers only: no embedding, no LM head in the part
};
struct PricedPartSet {
  std::string id, model, chip;
  const costmodel::PublicRecord* reference = nullptr;  // the first priced record whose part holds layers
  std::vector<PricedPart> parts;                       // in the file's order
  std::vector<std::string> approximations;             // the reference's question's (shared by the set)
  std::vector<std::pair<const costmodel::PublicRecord*, std::string>> not_priced;  // and why
};
struct PricedParts {
  std::vector<PricedPartSet> sets;  // in the file's order of their first record; only sets with a reference
  std::vector<double> weights;      // the members' weights (normalized; equal for one calibration)
};
// Every set of per-graph decode timings (graph_time records naming their part) in `t`, each
// record's part priced on the device of `chip` under each of `members`.
PricedParts price_public_parts(MixtureMembers& members, const costmodel::PublicTimings& t,
                               const costmodel::RuntimeSpec& runtime, const std::string& chip);

// Every set of per-graph decode timings in `t` (graph_time records naming their part), each
// record's part priced on the device under each member of `mixture` (one calibration: itself).
// A set with fewer than two priced records has no ratio and is left out.
std::vector<ShapeSet> public_shape_ratios(const costmodel::Predictor& mixture, const costmodel::PublicTimings& t,
                                          const costmodel::RuntimeSpec& runtime, const std::string& chip);

}  // namespace layoutx::explorer
