// Public records (costmodel/public_records.h) as layoutx questions (issue 36): each record's model,
// context and whole-model layout in layoutx's terms, priced by the device's predictor and runtime
// terms, against the published figure. What layoutx cannot express is said per record, never
// guessed: a record is priced only when its chip is the device's, its use is a calibration or an
// inequality, and the fields the price needs (context, weight width) are stated; every place where
// layoutx's layout differs from the published one is listed as an approximation.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "costmodel/device_spec.h"
#include "costmodel/public_records.h"
#include "costmodel/runtime_spec.h"
#include "explorer/member_predictor.h"
#include "explorer/model_layout.h"
#include "model/model_spec.h"

namespace layoutx::explorer {

// A record as a layoutx question.
struct PublicQuestion {
  model::ModelSpec model;
  int ctx = 0;
  ModelLayout layout;
  std::vector<std::string> approximations;  // where layoutx's layout is not the published one
};

// The model of the file's `models` section as a layoutx spec: the HF family its fields say (Gemma 2
// by its repo, Qwen3 by its q/k norms, Qwen2 by its q/k/v biases, else Llama's structure), RoPE
// over the whole head (the theta does not change a price). At a context `ctx` the window holds
// whole, every layer is built full (said in `approximations`). Throws Error for a model layoutx
// cannot build (a sliding window pattern it does not read), naming the model.
model::ModelSpec public_model_spec(const costmodel::PublicModel& p, std::vector<std::string>& approximations,
                                   std::optional<int> ctx = std::nullopt);

// The record as a question, priced on the device (whose chip is `chip`, the public file's key,
// "sm8750"), or nullopt with `why_not` set. A record of another chip is asked on the device too
// and enters through that chip's factor (chip_factor_prior), never directly.
// `per_graph`: a per-graph timing (graph_time; shape_only too, any chip: for ratios within its
// source, where the chip's factor cancels), its parts as large as the part it names
// (layout.graphs.this_record, "part 2 (layers 0-11)").
std::optional<PublicQuestion> public_question(const costmodel::PublicRecord& r, const costmodel::PublicTimings& t,
                                              const std::string& chip, std::string& why_not, bool per_graph = false);
// What a per-graph record's this_record names: "part 2 (layers 0-11)" gives part 2 and layers
// (0, 11); nullopt where it names none.
std::optional<int> record_part(const std::string& this_record);
std::optional<std::pair<int, int>> record_layers(const std::string& this_record);

// Another chip's time for what the device does in 1 ms, before any record of it: decode streams
// weights, so the ratio of the DRAM peaks (the device's over the chip's). nullopt when either peak
// is not known. A prior, not a fit: the chips' NPUs differ too (v75 vs v79), which the records'
// own factor (ChipFactor) shows.
std::optional<double> chip_factor_prior(const costmodel::PublicTimings& t, const std::string& device_chip,
                                        const std::string& chip);

// One record priced against its figure.
struct PublicCheck {
  const costmodel::PublicRecord* record = nullptr;
  bool priced = false;
  std::string why_not;                      // when not priced: "<category>: <detail>"
  std::vector<std::string> approximations;
  double published_ms = 0;                  // ms a token (a floor: the most it may take, 1000 / floor)
  double predicted_ms = 0, low_ms = 0, high_ms = 0;  // on the record's chip (the device's times the chip factor)
  double device_ms = 0;                     // the same layout on the device
  double chip_factor = 1;                   // the prior applied (1 on the device's own chip)
  int parts = 0;
  // decode_rate: predicted / published - 1; decode_floor: whether the prediction keeps the
  // bound (predicted_ms <= published_ms), and its interval's low end does.
  double error = 0;
  bool bound_kept = false, bound_kept_at_low = false;
};

// Every record of `t` as a question on the device of `chip` (or why not): asked once, priced by
// as many predictors as a caller has (public_fit_by_hypothesis prices them with each member).
struct PublicAsked {
  const costmodel::PublicRecord* record = nullptr;
  std::optional<PublicQuestion> question;
  std::string why_not;  // when no question
};
std::vector<PublicAsked> ask_public_records(const costmodel::PublicTimings& t, const std::string& chip);
std::vector<PublicCheck> price_public_records(Evaluator& ev, const std::vector<PublicAsked>& asked,
                                              const costmodel::PublicTimings& t, const costmodel::RuntimeSpec& runtime,
                                              const std::string& chip);
// Both in one: every record of `t`, priced where it can be on the device of `chip`.
std::vector<PublicCheck> check_public_records(Evaluator& ev, const costmodel::PublicTimings& t,
                                              const costmodel::RuntimeSpec& runtime, const std::string& chip);

// The public file's key of a device's chip: its spec's identity.soc_id, lower case ("sm8750").
std::string public_chip(const costmodel::DeviceSpec& device);

// The priced records summed up: on the device's own chip (`own`) or on the others (through their
// chip's prior factor).
struct PublicSummary {
  std::vector<double> errors;          // decode rates: predicted / published - 1
  double median_abs_error = 0, median_error = 0;
  int floors = 0, kept = 0, kept_at_low = 0;
};
PublicSummary summarize_public(const std::vector<PublicCheck>& checks, const std::string& chip, bool own);

// Every record priced by each member of a mixture alone (a single calibration: one member, itself):
// the records are asked once, and a graph's figures are computed once for all the members.
struct MemberChecks {
  std::string name;
  double weight = 0;  // from the team's timings
  std::vector<PublicCheck> checks;
};
std::vector<MemberChecks> price_public_by_member(const costmodel::Predictor& mixture, const costmodel::PublicTimings& t,
                                                 const costmodel::RuntimeSpec& runtime, const std::string& chip);
// The same with members whose figures other pricing shares (explorer/public_joint.cc).
std::vector<MemberChecks> price_public_by_member(MixtureMembers& members, const costmodel::PublicTimings& t,
                                                 const costmodel::RuntimeSpec& runtime, const std::string& chip);

// What the public records say of each of the device's hypotheses (a mixture's members): the
// records priced with that hypothesis alone, beside its weight from the team's timings.
struct HypothesisPublicFit {
  std::string name;
  double weight = 0;             // from the team's timings
  PublicSummary own, others;
  // log-likelihood of the device chip's records under this member alone: each decode rate's
  // log(published / predicted) ~ N(0, sd) with sd = hypot(the record's rel_sd, kExportSpread);
  // each floor kept with probability Phi(log(floor time / predicted) / kExportSpread).
  double log_likelihood = 0;
  double weight_with_public = 0;  // weight x likelihood, normalized over the members
};
// The spread between exports, runtimes and releases that one layout's price cannot see (the
// public file's "differences of 10-20% between runtimes, releases and runs are normal"): a prior.
inline constexpr double kExportSpread = 0.15;
// A record whose rel_sd the file leaves unknown.
inline constexpr double kUnknownRelSd = 0.15;
std::vector<HypothesisPublicFit> public_fit_by_hypothesis(const costmodel::Predictor& mixture,
                                                          const costmodel::PublicTimings& t,
                                                          const costmodel::RuntimeSpec& runtime, const std::string& chip);

// What another chip's records say of its factor: the published time over the device's prediction,
// per decode rate (median and range), and the floors' bound on it (the factor at most the smallest
// published floor time over the device's prediction).
struct ChipFactor {
  std::string chip;
  double prior = 1;
  int rates = 0;                       // decode rates behind the fit
  double median = 0, low = 0, high = 0;  // of published / device-predicted, over the rates
  int floors = 0;
  std::optional<double> bound;         // from the floors: the factor is at most this
};
std::vector<ChipFactor> chip_factors(const std::vector<PublicCheck>& checks, const std::string& device_chip);

}  // namespace layoutx::explorer
