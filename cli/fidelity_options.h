// The flags of the selection policy: the fidelity floor (--min-snr-db, --fidelity-slack-db,
// --no-fidelity), the minimum gain (--min-gain-pct) and --allow-untested; and the oracle that measures a variant's
// SNR against the float64 reference.
#pragma once
#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <string>

#include "explorer/evaluator.h"
#include "explorer/fidelity_proxy.h"
#include "explorer/selection.h"
#include "model/numerics/fidelity.h"

namespace layoutx::cli {

// The flags only: the fidelity policy itself (proxy, skips, the oracle) is explorer/fidelity_proxy.h.

// --quantizer (how 4-bit weights are quantized: per-channel, block32, block64; default the
// numerics' kDefaultW4Quantizer) and --calibration-steps (decode steps the 16-bit activation
// ranges are calibrated on; 0: none, every tensor over its own range per step), on `app`.
void add_quantizer_options(CLI::App& app, std::string& quantizer, int& calibration_steps);
// The QuantOptions of those flags (the quantizer checked: Error naming --quantizer).
model::numerics::QuantOptions quant_options(const std::string& quantizer, int calibration_steps);

struct FidelityOptions {
  bool off = false;
  double slack_db = 1.0;
  double min_snr_db = 0.0;  // 0: not set
  int steps = 0;  // 0: fidelity_history (fills the window)
  double min_gain_pct = 1.0;  // a change must save more than this % of the layer to win a tie
  bool allow_untested = false;  // unknown / contested conversions may win
  std::string quantizer = model::numerics::to_string(model::numerics::kDefaultW4Quantizer);
  int calibration_steps = model::numerics::QuantOptions{}.calibration_steps;
  void add_to(CLI::App& app);
  explorer::SelectionPolicy policy() const;
  // The oracle, or nullptr when fidelity is off.
  std::unique_ptr<explorer::FidelityOracle> load() const;
  std::string describe(const explorer::FidelityOracle* oracle) const;
};

}  // namespace layoutx::cli
