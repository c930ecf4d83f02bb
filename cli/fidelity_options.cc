#include "cli/fidelity_options.h"

#include <algorithm>
#include <map>

#include "cli/flag_checks.h"
#include "cli/table.h"
#include "explorer/evaluator.h"
#include "model/limits.h"
#include "explorer/fidelity_proxy.h"
#include "support/error.h"

namespace layoutx::cli {

namespace {

// The largest dB a floor or slack may be: far above any SNR float32 arithmetic reaches (~150 dB).
constexpr double kMaxDb = 1000.0;

}  // namespace

void add_quantizer_options(CLI::App& app, std::string& quantizer, int& calibration_steps) {
  app.add_option("--quantizer", quantizer,
                 "how 4-bit weights are quantized (w4a16): per-channel, or block-wise (LPBQ: per-channel float "
                 "scale x 4-bit block scale) with block32 or block64; 8-bit weights are always per channel")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            try {
              model::numerics::parse_weight_quantizer(text, "--quantizer");
              return "";
            } catch (const Error&) {
              return "must be per-channel, block32 or block64, got '" + text + "'";
            }
          },
          "per-channel|block32|block64", "quantizer"));
  app.add_option("--calibration-steps", calibration_steps,
                 "seeded decode steps the 16-bit activation ranges are calibrated on (then fixed; values outside "
                 "clip); 0: no calibration, every tensor encoded over its own range at each step")
      ->capture_default_str()
      ->check(integer_in(0, model::limits::kMaxFidelitySteps));
}

model::numerics::QuantOptions quant_options(const std::string& quantizer, int calibration_steps) {
  model::numerics::QuantOptions q;
  q.w4 = model::numerics::parse_weight_quantizer(quantizer, "--quantizer");
  q.calibration_steps = calibration_steps;
  return q;
}

void FidelityOptions::add_to(CLI::App& app) {
  app.add_flag("--no-fidelity", off, "do not measure fidelity (no floor)");
  app.add_option("--fidelity-slack-db", slack_db,
                 "fidelity floor: at most this many dB below the incumbent's SNR")
      ->capture_default_str()
      ->check(number_in(0.0, kMaxDb));
  app.add_option("--min-snr-db", min_snr_db, "fidelity floor: an absolute SNR in dB instead")
      ->check(number_in(0.0, kMaxDb));
  app.add_option("--fidelity-steps", steps,
                 "decode steps the fidelity check runs (default: a sliding layer's window + 8, so the window fills "
                 "and a ring wraps; full layers 520 or their context)")
      ->check(integer_in(1, model::limits::kMaxFidelitySteps));
  app.add_option("--min-gain-pct", min_gain_pct,
                 "candidates within this % of the fastest tie with it (a change must earn its place)")
      ->capture_default_str()
      ->check(number_in(0.0, 100.0));
  add_quantizer_options(app, quantizer, calibration_steps);
  app.add_flag("--allow-untested", allow_untested,
               "let candidates whose conversion is unknown or contested win (default: only known-good ones)");
}

explorer::SelectionPolicy FidelityOptions::policy() const {
  explorer::SelectionPolicy p;
  p.fidelity_slack_db = slack_db;
  p.min_gain_fraction = min_gain_pct / 100.0;
  if (min_snr_db > 0) p.min_snr_db = min_snr_db;
  p.allow_untested = allow_untested;
  return p;
}

std::unique_ptr<explorer::FidelityOracle> FidelityOptions::load() const {
  if (off) return nullptr;
  return explorer::make_numerics_oracle(steps, quant_options(quantizer, calibration_steps));
}

std::string FidelityOptions::describe(const explorer::FidelityOracle* oracle) const {
  if (!oracle) return "not assessed (--no-fidelity)";
  std::string floor = min_snr_db > 0 ? ">= " + fmt(min_snr_db, 1) + " dB"
                                     : "no more than " + fmt(slack_db, 1) + " dB below the incumbent";
  return oracle->describe() + "; floor " + floor;
}

}  // namespace layoutx::cli
