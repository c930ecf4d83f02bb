// Which predictor a device gets, decided in one place (in the spirit of Halide adams2019's
// make_default_cost_model, which its search and its trainer both call). Every caller (the CLI
// verbs, the CPU loop, the decision loop, Python through the CLI) gets its Predictor here:
//   - from a saved document, whatever its kind: a single calibration gives the one calibrated
//     model, a hypotheses document the mixture of its kept hypotheses (a file, or a document a
//     database stored: predictor_from_file, predictor_from_document);
//   - the device's own (shipped) files, checked for freshness (costmodel/freshness.h) and
//     refitted in memory when stale (shipped_predictor);
//   - fitted on records (fit_predictor here; costmodel/device_fit.h for the fit with its reports).
// Callers see the Predictor interface only; the concrete classes stay in costmodel/.
#pragma once
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "costmodel/calibration.h"
#include "costmodel/device_spec.h"
#include "costmodel/legality.h"
#include "costmodel/measurements.h"
#include "costmodel/predictor.h"

namespace layoutx::costmodel {

class HypothesisPredictor;
class OpLevelPredictor;
struct HypothesisSet;

// From a saved document's text, used as it is (not checked against any data): a hypotheses
// document (costmodel/hypotheses_document.h) gives the mixture of its members, any other text is
// read as one calibration (costmodel/calibration.h). `name` names it in errors (a path, or
// "db: calibrations/ID"). Throws Error naming `name` and the key when it is malformed or for
// another device.
std::unique_ptr<Predictor> predictor_from_document(const std::string& text, const std::string& name,
                                                   const DeviceSpec& device);
// The same from a file (`--calibration FILE`).
std::unique_ptr<Predictor> predictor_from_file(const std::string& path, const DeviceSpec& device);

// The one calibration's predictor with these legality rules (e.g. a loop that adds compile outcomes).
std::unique_ptr<Predictor> predictor_from_calibration(const DeviceSpec& device, Calibration calibration, RuleSet rules);
// The mixture of a fitted hypothesis set, keeping the hypotheses that hold `mass` of the weight
// (1: every hypothesis), with the device's rules.
std::unique_ptr<Predictor> predictor_from_hypotheses(const HypothesisSet& set, const DeviceSpec& device, double mass);

// The device's own predictor, from the files its spec names (DeviceSpec::calibration): its saved
// hypotheses document when it has hypotheses and measurements, else its saved calibration; a
// saved fit that is stale (costmodel/freshness.h), unreadable or missing is refitted in memory
// on the measurements, said on `log`. Throws Error when the device names no calibration files.
struct ShippedPredictor {
  std::unique_ptr<Predictor> predictor;
  bool refitted = false;
  // Where it came from, for outputs: "shipped hypotheses configs/calibration/x.hypotheses.yaml,
  // 3 kept, combined by weight", "shipped configs/calibration/x.calibration.yaml", or the refit.
  std::string source;
};
ShippedPredictor shipped_predictor(const DeviceSpec& device, std::ostream& log);

// Fitted on `records` (costmodel::calibrate's ridge toward the priors): with `hypotheses` and a
// device that has some, each hypothesis fitted and the kept ones mixed by weight (what `select`
// predicts with), else the device spec's one structure. Legality from `rules`.
std::unique_ptr<Predictor> fit_predictor(const std::vector<MeasurementRecord>& records, const DeviceSpec& device,
                                         const RuleSet& rules, bool hypotheses = true);

// The typed loaders behind shipped_predictor, for tests and benchmarks that look inside the
// model (its calibration, its members). `refitted` (if given) says whether they refit.
std::unique_ptr<OpLevelPredictor> load_shipped_predictor(const DeviceSpec& device, std::ostream& log,
                                                         bool* refitted = nullptr);
std::unique_ptr<OpLevelPredictor> load_default_predictor(std::ostream& log);  // kDefaultDevice's
std::unique_ptr<HypothesisPredictor> load_shipped_hypothesis_predictor(const DeviceSpec& device, std::ostream& log,
                                                                       bool* refitted = nullptr);
std::unique_ptr<HypothesisPredictor> load_default_hypothesis_predictor(std::ostream& log);  // kDefaultDevice's

}  // namespace layoutx::costmodel
