#include "cli/fidelity_options.h"

#include "cli/table.h"

namespace layoutx::cli {

void FidelityOptions::add_to(CLI::App& app) {
  app.add_flag("--no-fidelity", off, "do not measure fidelity (no floor)");
  app.add_option("--fidelity-slack-db", slack_db,
                 "fidelity floor: at most this many dB below the incumbent's SNR")->capture_default_str();
  app.add_option("--min-snr-db", min_snr_db, "fidelity floor: an absolute SNR in dB instead");
  app.add_option("--fidelity-steps", steps, "decode steps the fidelity check runs")->capture_default_str();
}

explorer::SelectionPolicy FidelityOptions::policy() const {
  explorer::SelectionPolicy p;
  p.fidelity_slack_db = slack_db;
  if (min_snr_db > 0) p.min_snr_db = min_snr_db;
  return p;
}

std::unique_ptr<explorer::FidelityOracle> FidelityOptions::load() const {
  return nullptr;  // the numerics oracle is wired in once model/numerics lands
}

std::string FidelityOptions::describe(const explorer::FidelityOracle* oracle) const {
  if (off) return "not assessed (--no-fidelity)";
  if (!oracle) return "not assessed (no fidelity oracle available)";
  std::string floor = min_snr_db > 0 ? ">= " + fmt(min_snr_db, 1) + " dB"
                                     : "no more than " + fmt(slack_db, 1) + " dB below the incumbent";
  return oracle->describe() + "; floor " + floor;
}

}  // namespace layoutx::cli
