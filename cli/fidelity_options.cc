#include "cli/fidelity_options.h"

#include <algorithm>
#include <map>

#include "cli/table.h"
#include "explorer/evaluator.h"
#include "model/numerics/fidelity.h"

namespace layoutx::cli {

namespace {

// SNR of the variant (float32, its precision simulated) against the float64 reference over a
// few seeded decode steps, through model/numerics. Memoized per layer shape and variant.
// Runs on a proxy of the layer: the attention exactly as the layer has it (heads, kv heads,
// head dim, rotary dims, window and cache), the hidden and MLP widths divided by kShrink. The
// layouts differ only in the attention, and the full widths cost ~50M MACs a step.
class NumericsOracle : public explorer::FidelityOracle {
 public:
  explicit NumericsOracle(int steps) : steps_(steps) {}
  std::optional<double> snr_db(const model::LayerSpec& layer, const model::Variant& v) override {
    std::string key = explorer::Evaluator::shape_key(layer) + "|" + v.key();
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    model::LayerSpec proxy = layer;
    proxy.hidden = std::max(64, layer.hidden / kShrink);
    proxy.intermediate = std::max(64, layer.intermediate / kShrink);
    double snr = model::numerics::fidelity_snr_db(proxy, v, steps_, kSeed);
    memo_.emplace(key, snr);
    return snr;
  }
  std::string describe() const override {
    return "SNR of the layer output vs the float64 reference, " + std::to_string(steps_) +
           " seeded decode steps, precision simulated, on a proxy layer (same attention, hidden and MLP widths /" +
           std::to_string(kShrink) + ")";
  }

 private:
  static constexpr uint64_t kSeed = 1;
  static constexpr int kShrink = 8;
  int steps_;
  std::map<std::string, double> memo_;
};

}  // namespace

void FidelityOptions::add_to(CLI::App& app) {
  app.add_flag("--no-fidelity", off, "do not measure fidelity (no floor)");
  app.add_option("--fidelity-slack-db", slack_db,
                 "fidelity floor: at most this many dB below the incumbent's SNR")->capture_default_str();
  app.add_option("--min-snr-db", min_snr_db, "fidelity floor: an absolute SNR in dB instead");
  app.add_option("--fidelity-steps", steps, "decode steps the fidelity check runs")->capture_default_str();
  app.add_option("--min-gain-pct", min_gain_pct,
                 "candidates within this % of the fastest tie with it (a change must earn its place)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0));
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
  return std::make_unique<NumericsOracle>(steps);
}

std::string FidelityOptions::describe(const explorer::FidelityOracle* oracle) const {
  if (!oracle) return "not assessed (--no-fidelity)";
  std::string floor = min_snr_db > 0 ? ">= " + fmt(min_snr_db, 1) + " dB"
                                     : "no more than " + fmt(slack_db, 1) + " dB below the incumbent";
  return oracle->describe() + "; floor " + floor;
}

}  // namespace layoutx::cli
