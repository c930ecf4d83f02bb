#include "explorer/fidelity_proxy.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "model/limits.h"
#include "model/numerics/checkpoints.h"
#include "model/tensor_budget.h"
#include "support/disk_memo.h"
#include "support/progress.h"

namespace layoutx::explorer {

model::LayerSpec fidelity_proxy(const model::LayerSpec& layer) {
  model::LayerSpec proxy = layer;
  proxy.hidden = std::max(64, layer.hidden / kProxyShrink);
  proxy.intermediate = std::max(64, layer.intermediate / kProxyShrink);
  return proxy;
}

std::string fidelity_skip_reason(const model::LayerSpec& layer) {
  if (layer.cache_entries > model::limits::kMaxFidelityContext)
    return "they cache " + std::to_string(layer.cache_entries) + " tokens, above " +
           std::to_string(model::limits::kMaxFidelityContext);
  const int64_t n = model::layer_tensor_elements(fidelity_proxy(layer));
  if (n > model::limits::kMaxFidelityElements)
    return "their proxy layer has " + std::to_string(n) + " weight and cache elements, above " +
           std::to_string(model::limits::kMaxFidelityElements);
  return "";
}

std::string fidelity_skip_note(const model::ModelSpec& m, int ctx, const FidelityOracle* oracle) {
  if (!oracle) return "";
  std::string note;
  for (auto t : {model::LayerType::kSliding, model::LayerType::kFull}) {
    if (m.count(t) == 0) continue;
    const std::string why = fidelity_skip_reason(m.layer(t, ctx));
    if (!why.empty())
      note += std::string(note.empty() ? "" : "; ") + "fidelity skipped for " + model::to_string(t) + " layers at ctx " +
              std::to_string(ctx) + " (" + why + "): no fidelity floor for them";
  }
  return note;
}

std::string fidelity_code_stamp() {
  return "fidelity code " + std::to_string(kFidelityCodeVersion) + " " + cpu_stamp();
}

std::string quant_description(const model::numerics::QuantOptions& q) {
  const int b = model::numerics::block_size(q.w4);
  std::string s = "w8 per channel, w4 " + (b ? "block " + std::to_string(b) + " (LPBQ)" : std::string("per channel"));
  s += q.calibration_steps > 0
           ? ", a16 per tensor calibrated on " + std::to_string(q.calibration_steps) + " seeded steps"
           : ", a16 per tensor over each step's own range (not calibrated)";
  return s;
}

namespace {

double monotonic_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A figure as text that reads back as the same double (inf and nan included).
std::string exact_text(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::optional<double> parse_exact(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

// The layouts differ only in the attention, and the full widths cost ~50M MACs a step: the
// proxy keeps the attention and shrinks the rest. Figures are memoized in the process and on
// disk (a figure depends only on its key and on the code: seconds a select saved on every run
// after the first).
class NumericsOracle : public FidelityOracle {
 public:
  NumericsOracle(int steps, model::numerics::QuantOptions quant, DiskMemo disk)
      : steps_(steps), quant_(quant), disk_(std::move(disk)) {}
  std::optional<double> snr_db(const model::LayerSpec& layer, const model::Variant& v) override {
    // The proxy keeps the layer's K/V cache, which grows with the context: above the bound the
    // check is skipped (no floor); fidelity_skip_note says so.
    if (!fidelity_skip_reason(layer).empty()) return std::nullopt;
    model::LayerSpec proxy = fidelity_proxy(layer);
    const int history = steps_ ? steps_ : model::numerics::fidelity_history(layer);
    if (proxy.type == model::LayerType::kFull && proxy.context > history) {
      // A full layer's cache slots past the history are never written: masked, they add
      // exp(-100 - max) (below float32's resolution of the softmax sum) and encode to 0, so the
      // layer at ctx = history gives the same outputs at a fraction of the cost, whatever the
      // context asked (and ctx 1024 and 4096 share one run).
      proxy.context = history;
      proxy.cache_entries = history - 1;
    }
    const std::string key = Evaluator::shape_key(proxy) + "|" + std::to_string(history) + "|" + v.key() + "|seed " +
                            std::to_string(kSeed) + "|" + quant_description(quant_) + "|calibration seed " +
                            std::to_string(quant_.calibration_seed);
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    std::optional<double> snr;
    if (auto saved = disk_.get(key)) snr = parse_exact(*saved);
    if (!snr) {
      snr = compute(proxy, v, history);
      disk_.put(key, exact_text(*snr));
    }
    memo_.emplace(key, *snr);
    return *snr;
  }
  std::string describe() const override {
    namespace nx = model::numerics;
    const std::string history =
        (steps_ ? std::to_string(steps_) + " seeded decode steps"
                : std::string("a seeded history filling the window (window + 8 decode steps; full layers 520 "
                              "or their context)")) +
        ", every step of one up to " + std::to_string(nx::kDenseHistory) + " steps, else " +
        std::to_string(nx::kSegments) + " segments of " + std::to_string(nx::kSegmentSteps) +
        " steps spread evenly (the last ending it; the steps between hand on their K/V entries)";
    return "SNR of the layer output vs the float64 reference over " + history + ", precision simulated (" +
           quant_description(quant_) + "), on a proxy layer (same attention, hidden and MLP widths /" +
           std::to_string(kProxyShrink) + "); skipped (no floor) for a layer caching more than " +
           std::to_string(model::limits::kMaxFidelityContext) + " tokens or whose proxy exceeds " +
           std::to_string(model::limits::kMaxFidelityElements) + " weight and cache elements";
  }

 private:
  // One figure. Once the check has taken more than a second, a progress line at most once a
  // second (a figure that took a second itself always gets its line): a user waiting sees the
  // check move without a line per figure on a quick select.
  double compute(const model::LayerSpec& proxy, const model::Variant& v, int history) {
    if (computed_ == 0) started_ = monotonic_seconds();
    const double before = monotonic_seconds();
    const double snr = model::numerics::fidelity_snr_db(proxy, v, history, kSeed, quant_);
    ++computed_;
    const double now = monotonic_seconds();
    if (now - started_ > 1.0 && (now - last_line_ >= 1.0 || now - before >= 1.0)) {
      last_line_ = now;
      char line[512];
      std::snprintf(line, sizeof line, "layoutx: fidelity check: %s layer %s: %.2f dB in %.1f s (%d computed, %.1f s)",
                    model::to_string(proxy.type), v.key().c_str(), snr, now - before, computed_, now - started_);
      progress_line(line);
    }
    return snr;
  }

  static constexpr uint64_t kSeed = 1;
  int computed_ = 0;      // figures computed (not read from a memo) by this oracle
  double started_ = 0;    // monotonic seconds when the first began
  double last_line_ = 0;  // monotonic seconds of the last progress line
  int steps_;  // 0: fidelity_history
  model::numerics::QuantOptions quant_;
  std::map<std::string, double> memo_;
  DiskMemo disk_;
};

}  // namespace

std::unique_ptr<FidelityOracle> make_numerics_oracle(int steps, const model::numerics::QuantOptions& quant) {
  return make_numerics_oracle(steps, quant, DiskMemo(user_cache_folder("fidelity"), fidelity_code_stamp()));
}

std::unique_ptr<FidelityOracle> make_numerics_oracle(int steps, const model::numerics::QuantOptions& quant,
                                                     DiskMemo disk) {
  return std::make_unique<NumericsOracle>(steps, quant, std::move(disk));
}

}  // namespace layoutx::explorer
