// The measurement loop tested without a device (layoutx next, issue "decisions that know what was
// never tried"): a simulated device with a hidden truth answers each measurement a strategy asks
// for; the answer goes through the real path (an AI Hub profile JSON, ingested into a database,
// recalibrated, re-selected), until the decisions equal the truth's optimum.
//
// The truth (one seed): one of the device's hypotheses, drawn uniformly (with
// competing_structures; else the base spec), its coefficients drawn from their priors (log-normal
// around each prior with its stated relative sd, floored at its physical bound), and a hidden
// outcome (compiles or not, each with probability 1/2) for every legality question the
// rules leave open (unknown or contested) at the precision. The first export's graphs are
// "measured" from the truth (timings with 2% noise; their op shares are left out; an op-level
// profile the loop asks for later answers with per-op rows, fitted as op shares), and the cost model
// is calibrated on them alone, so the loop never mixes the real device with a simulated one. The
// loop decides with what `select` would use: every hypothesis fitted and weighted on the data so
// far (costmodel/hypothesis_fit.h), so it does not know which structure is true either.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "costmodel/device_spec.h"
#include "costmodel/legality.h"
#include "costmodel/measurements.h"
#include "model/model_spec.h"

namespace layoutx::explorer {

enum class Strategy {
  kNext,    // the most valuable measurement (plan_measurements' first)
  kRandom,  // a uniformly random measurement of the same candidates (seeded)
  kGrid,    // the candidates in a fixed order: design-space order, layer type, context
};
const char* to_string(Strategy s);

struct LoopSetup {
  model::ModelSpec model;
  costmodel::DeviceSpec device;
  costmodel::RuleSet rules;
  std::vector<costmodel::MeasurementRecord> first_export;  // whose graphs seed the calibration
  model::Precision precision = model::Precision::kW4A16;
  std::vector<int> ctxs{1024, 4096};
  int max_measurements = 12;      // a run that is not right by then counts as max + 1
  double timing_noise_rel = 0.02; // the simulated device's scatter
  std::string scratch_dir;        // where the simulated profiles and the database go
  bool explain = false;           // log each wrong decision (chosen vs the truth's best) per round
  bool competing_structures = true;  // the truth draws a hypothesis; the loop fits the mixture
  // Offer op-level profiles of timed graphs (answered with per-op rows the calibration fits as
  // op shares); off: timings and compile checks only, as before the loop back existed.
  bool offer_op_profiles = true;
  // Axes the question fixes (axis -> value, as SelectionPolicy::fixed_axes): the loop selects only
  // among variants with these values, e.g. the team's exporter forms held at their defaults so a
  // run asks the layout question alone (a round over the whole space prices every exporter form).
  std::map<std::string, std::string> fixed_axes;
};

// A decision is right when its chosen graph converts on the truth and its true latency is within
// max(the minimum gain, the device's timing scatter) of the truth's fastest graph that converts:
// a closer call is one no single timing resolves.
struct LoopRun {
  uint64_t seed = 0;
  Strategy strategy = Strategy::kNext;
  int measurements = 0;  // taken until every decision equals the truth's optimum
  bool converged = false;
  std::string truth_hypothesis;  // the truth's structure ("" when not drawn)
  std::vector<std::string> log;  // one line per measurement: what, the answer, right yet?
};

// The exporters' forms (model::DesignSpace::exporter_axes) at the default variant's values at
// `precision`: the fixed axes of the team's layout question.
std::map<std::string, std::string> exporter_forms_at_defaults(model::Precision precision);

// One truth (seed), one strategy: measures until the decisions are right or the budget is spent.
LoopRun run_loop(const LoopSetup& setup, uint64_t seed, Strategy strategy);

}  // namespace layoutx::explorer
