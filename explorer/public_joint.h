// One calibration over the team's timings and the public records (issue 36): the device's
// hypotheses, each fitted on the team's timings (its coefficients and its pseudo-BMA+ weight),
// weighed again by the public records they price (explorer/public_layouts.h), with a factor per
// chip and a term per source on top (costmodel/joint_fit.h):
//   - a chip's factor: prior the ratio of the DRAM peaks (chip_factor_prior), log-sd
//     kChipPriorLogSd: decode streams weights, but the NPUs differ (v73, v75 vs v79);
//   - a source's term (the record's exporter, with its runtime and host): prior 1, log-sd
//     kSourcePriorLogSd: what an exporter's graphs cost beyond the layout layoutx prices;
//   - each record's noise: hypot(its rel_sd, kExportSpread) for a rate; kExportSpread for a floor
//     (a censored likelihood: the CI's minimum speed bounds the time from above);
//   - a per-graph set's plain parts (T1: one export's 12-layer parts at contexts 512-4096, on
//     another chip) under a level of the set's own with a nearly flat prior (kShapeLevelLogSd):
//     what its chip, exporter and runtime do to every part alike cancels, so they weigh the
//     hypotheses by the shape alone (how a part's time grows with the context). That shape is
//     read as the device's: a knee that moves with the chip's VTCM would make it another chip's.
// What it reports: every term's posterior beside its prior (and the record that pulls it most),
// each record in-sample and left out, each source left out, the hypotheses' weights before and
// after (summed per hypothesis axis: which w4 form the records favour), the floors kept.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "costmodel/device_spec.h"
#include "costmodel/hypothesis_fit.h"
#include "costmodel/joint_fit.h"
#include "costmodel/predictor.h"
#include "costmodel/public_records.h"
#include "costmodel/runtime_spec.h"

namespace layoutx::explorer {

// Priors of the terms (log-sd of the factor): stated, not fitted; `public --joint` takes others to
// show how far the answer rests on them.
inline constexpr double kChipPriorLogSd = 0.3;
inline constexpr double kSourcePriorLogSd = 0.3;
// A per-graph set's level: log-sd 3 (a factor of 20 at one sd), so the set's level is its own.
inline constexpr double kShapeLevelLogSd = 3.0;
struct JointPriors {
  double chip_log_sd = kChipPriorLogSd;
  double source_log_sd = kSourcePriorLogSd;
};

struct JointRecord {
  const costmodel::PublicRecord* record = nullptr;
  bool floor = false;
  bool part = false;                  // a plain part's time of a per-graph set (under its level)
  double published_ms = 0;            // a floor's: the most a token may take
  costmodel::JointQuantile fitted;    // ms a token on the record's chip, every record in
  costmodel::JointQuantile held_out;  // the same with this record left out of the fit
  double error = 0, held_out_error = 0;  // rates: predicted median / published - 1
  bool kept = false, kept_held_out = false;  // floors: the median within the bound
};

struct JointTermReport {
  std::string kind, key;             // "chip" sm8650; "source" executorch static llama; "level" T1 qwen3-4b x2_elite
  double prior = 1, prior_log_sd = 0;
  costmodel::JointQuantile posterior;  // the factor
  int rates = 0, floors = 0;         // records behind it (a part's time counts as a rate)
  std::string pulled_by;             // the record whose leaving out moves the median most
  double pull = 0;                   // that move: median without it / median with it - 1
};

struct JointSource {                 // one publication's records (their id: E3, A11) left out together
  std::string id;
  int rates = 0;
  double median_abs_error = 0, median_error = 0;
};

struct JointAxisValue {              // a hypothesis axis's value (a segment of the names)
  size_t position = 0;
  std::string value;
  double team_weight = 0, joint_weight = 0;
};

struct PublicJoint {
  std::vector<JointTermReport> terms;
  std::vector<JointRecord> records;  // the priced ones, in the file's order
  std::vector<std::string> names;    // hypotheses
  std::vector<double> team_weights, joint_weights;
  std::vector<JointAxisValue> axes;  // only axes whose values differ
  std::vector<JointSource> sources;
  double median_abs_error = 0, held_out_median_abs_error = 0, held_out_median_error = 0;
  int rates = 0, floors = 0, floors_kept = 0, floors_kept_held_out = 0;
  // The parts' times: how many, and their median |error| in-sample and each left out (under
  // their set's level: errors of the shape).
  int parts = 0;
  double parts_median_abs_error = 0, parts_held_out_median_abs_error = 0;
  double level = costmodel::kIntervalLevel;
};

// The joint fit of `mixture`'s members (a single calibration: one member) on the records of `t`
// layoutx prices on the device of `chip`. Its records point into `t`, which must outlive it.
PublicJoint fit_public_joint(const costmodel::Predictor& mixture, const costmodel::PublicTimings& t,
                             const costmodel::RuntimeSpec& runtime, const std::string& chip,
                             const JointPriors& priors = {});

// The device's predictor with the hypotheses weighed by the joint fit (the team's timings and the
// public records), the heaviest holding kPredictorWeightMass kept. Throws Error when `mixture` is a
// single calibration (nothing to weigh).
std::unique_ptr<costmodel::Predictor> public_joint_predictor(const costmodel::Predictor& mixture,
                                                             const std::vector<double>& joint_weights);

// What `--evidence all` weighs a device's hypotheses with: the joint fit's weights (the fit alone,
// none of the report's leave-one-out refits) and how many records they rest on, for the public
// timings file at `path`. Kept between runs (support/disk_memo.h, memo "public-joint") under the
// mixture's calibration id, the file's bytes, the device file's bytes (its runtime terms price the
// records) and the code: the file is parsed and every record priced under every member (about
// 2 s) only when the memo misses, so a verb that hits it pays for reading two files.
struct JointWeights {
  std::vector<double> weights;  // one per mixed hypothesis, in its order
  int rates = 0, floors = 0, parts = 0;
};
JointWeights public_joint_weights(const costmodel::Predictor& mixture, const std::string& path,
                                  const costmodel::DeviceSpec& device, const JointPriors& priors = {});

// The team's hypothesis set with the joint weights (by name; a hypothesis the fitted mixture did
// not keep gets 0): what `calibrate --evidence all` reports the team's timings under.
costmodel::HypothesisSet with_joint_weights(costmodel::HypothesisSet set, const PublicJoint& joint);

}  // namespace layoutx::explorer
