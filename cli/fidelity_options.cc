#include "cli/fidelity_options.h"

#include <algorithm>
#include <map>

#include "cli/flag_checks.h"
#include "cli/table.h"
#include "explorer/evaluator.h"
#include "model/limits.h"
#include "model/numerics/fidelity.h"
#include "model/tensor_budget.h"
#include "support/error.h"

namespace layoutx::cli {

namespace {

// The largest dB a floor or slack may be: far above any SNR float32 arithmetic reaches (~150 dB).
constexpr double kMaxDb = 1000.0;

constexpr int kShrink = 8;  // the proxy layer's hidden and MLP widths are the layer's / kShrink

model::LayerSpec proxy_of(const model::LayerSpec& layer) {
  model::LayerSpec proxy = layer;
  proxy.hidden = std::max(64, layer.hidden / kShrink);
  proxy.intermediate = std::max(64, layer.intermediate / kShrink);
  return proxy;
}

// Why the fidelity check skips a layer ("" if it does not): the proxy keeps the layer's K/V
// cache, which grows with the context, so above the bounds (model/limits.h) it is not run.
std::string skip_reason(const model::LayerSpec& layer) {
  if (layer.cache_entries > model::limits::kMaxFidelityContext)
    return "they cache " + std::to_string(layer.cache_entries) + " tokens, above " +
           std::to_string(model::limits::kMaxFidelityContext);
  const int64_t n = model::layer_tensor_elements(proxy_of(layer));
  if (n > model::limits::kMaxFidelityElements)
    return "their proxy layer has " + std::to_string(n) + " weight and cache elements, above " +
           std::to_string(model::limits::kMaxFidelityElements);
  return "";
}

// SNR of the variant (float32, its precision simulated) against the float64 reference over a
// few seeded decode steps, through model/numerics. Memoized per layer shape and variant.
// Runs on a proxy of the layer: the attention exactly as the layer has it (heads, kv heads,
// head dim, rotary dims, window and cache), the hidden and MLP widths divided by kShrink. The
// layouts differ only in the attention, and the full widths cost ~50M MACs a step.
class NumericsOracle : public explorer::FidelityOracle {
 public:
  NumericsOracle(int steps, model::numerics::QuantOptions quant) : steps_(steps), quant_(quant) {}
  std::optional<double> snr_db(const model::LayerSpec& layer, const model::Variant& v) override {
    // The proxy keeps the layer's K/V cache, which grows with the context: above the bound the
    // check is skipped (no floor), and describe() says so.
    if (!skip_reason(layer).empty()) return std::nullopt;  // no floor; fidelity_skip_note says so
    model::LayerSpec proxy = proxy_of(layer);
    const int history = steps_ ? steps_ : model::numerics::fidelity_history(layer);
    if (proxy.type == model::LayerType::kFull && proxy.context > history) {
      // A full layer's cache slots past the history are never written: masked, they add
      // exp(-100 - max) (below float32's resolution of the softmax sum) and encode to 0, so the
      // layer at ctx = history gives the same outputs at a fraction of the cost, whatever the
      // context asked (and ctx 1024 and 4096 share one run).
      proxy.context = history;
      proxy.cache_entries = history - 1;
    }
    const std::string key = explorer::Evaluator::shape_key(proxy) + "|" + std::to_string(history) + "|" + v.key();
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    double snr = model::numerics::fidelity_snr_db(proxy, v, history, kSeed, quant_);
    memo_.emplace(key, snr);
    return snr;
  }
  std::string describe() const override {
    const std::string history = steps_ ? std::to_string(steps_) + " seeded decode steps"
                                       : "a seeded history filling the window (window + 8 decode steps; full layers 520 "
                                         "or their context)";
    return "SNR of the layer output vs the float64 reference over " + history + ", precision simulated (" +
           quant_description(quant_) + "), on a proxy layer (same attention, hidden and MLP widths /" +
           std::to_string(kShrink) + "); skipped (no floor) for a layer caching more than " +
           std::to_string(model::limits::kMaxFidelityContext) + " tokens or whose proxy exceeds " +
           std::to_string(model::limits::kMaxFidelityElements) + " weight and cache elements";
  }

 private:
  static constexpr uint64_t kSeed = 1;
  int steps_;  // 0: fidelity_history
  model::numerics::QuantOptions quant_;
  std::map<std::string, double> memo_;
};

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

std::string quant_description(const model::numerics::QuantOptions& q) {
  const int b = model::numerics::block_size(q.w4);
  std::string s = "w8 per channel, w4 " + (b ? "block " + std::to_string(b) + " (LPBQ)" : std::string("per channel"));
  s += q.calibration_steps > 0
           ? ", a16 per tensor calibrated on " + std::to_string(q.calibration_steps) + " seeded steps"
           : ", a16 per tensor over each step's own range (not calibrated)";
  return s;
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
  return std::make_unique<NumericsOracle>(steps, quant_options(quantizer, calibration_steps));
}

std::string fidelity_skip_note(const model::ModelSpec& m, int ctx, const explorer::FidelityOracle* oracle) {
  if (!oracle) return "";
  std::string note;
  for (auto t : {model::LayerType::kSliding, model::LayerType::kFull}) {
    if (m.count(t) == 0) continue;
    const std::string why = skip_reason(m.layer(t, ctx));
    if (!why.empty())
      note += std::string(note.empty() ? "" : "; ") + "fidelity skipped for " + model::to_string(t) + " layers at ctx " +
              std::to_string(ctx) + " (" + why + "): no fidelity floor for them";
  }
  return note;
}

std::string FidelityOptions::describe(const explorer::FidelityOracle* oracle) const {
  if (!oracle) return "not assessed (--no-fidelity)";
  std::string floor = min_snr_db > 0 ? ">= " + fmt(min_snr_db, 1) + " dB"
                                     : "no more than " + fmt(slack_db, 1) + " dB below the incumbent";
  return oracle->describe() + "; floor " + floor;
}

}  // namespace layoutx::cli
