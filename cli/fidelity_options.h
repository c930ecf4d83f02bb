// The flags of the selection policy: the fidelity floor (--min-snr-db, --fidelity-slack-db,
// --no-fidelity), the minimum gain (--min-gain-pct) and --allow-untested; and the oracle that measures a variant's
// SNR against the float64 reference.
#pragma once
#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <string>

#include "explorer/evaluator.h"
#include "explorer/selection.h"

namespace layoutx::cli {

struct FidelityOptions {
  bool off = false;
  double slack_db = 1.0;
  double min_snr_db = 0.0;  // 0: not set
  int steps = 4;
  double min_gain_pct = 1.0;  // a change must save more than this % of the layer to win a tie
  bool allow_untested = false;  // unknown / contested conversions may win
  void add_to(CLI::App& app);
  explorer::SelectionPolicy policy() const;
  // The oracle, or nullptr when fidelity is off.
  std::unique_ptr<explorer::FidelityOracle> load() const;
  std::string describe(const explorer::FidelityOracle* oracle) const;
};

// "fidelity skipped for full layers at ctx N (they cache M tokens, above 65536)" when the oracle
// is on and skips a layer type of `m` at `ctx` (model/limits.h); "" otherwise.
std::string fidelity_skip_note(const model::ModelSpec& m, int ctx, const explorer::FidelityOracle* oracle);

}  // namespace layoutx::cli
