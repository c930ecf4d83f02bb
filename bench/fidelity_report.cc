// The fidelity table of issue #15 part 5: SNR (dB) and top-k agreement of each precision and
// weight quantizer (fp16; w8a16 per channel; w4a16 per channel, LPBQ block 32, block 64) against
// the float64 reference, on Spark's sliding and full layers over a seeded history longer than
// the sliding window (fidelity_history: window + 8 = 520 steps, so the window fills and the ring
// wraps), the `ring` layout, 16-bit activations calibrated as QuantOptions says. Two widths: the
// full layer (as `layoutx parity` runs it) and select's proxy (hidden and MLP widths / 8).
// Then issue 34's forms beside them: u16 and u8 KV caches (kv_dtype) and block-wise 4-bit weights
// through the weight_quant axis (16, 32, 64).
//   build/bench/fidelity_report [--steps N] [--ctx C] [--proxy-only]
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "model/model_loader.h"
#include "model/numerics/fidelity.h"
#include "model/numerics/reference.h"
#include "model/numerics/runtime.h"
#include "support/error.h"

namespace nx = layoutx::model::numerics;
using namespace layoutx;

namespace {

struct Row {
  const char* name;
  model::Precision precision;
  nx::WeightQuantizer quantizer;
  std::vector<std::string> sets;  // the exporters' forms (issue 34): axes off their defaults
};

}  // namespace

int main(int argc, char** argv) {
  try {
    int steps = 0, ctx = 4096;
    bool proxy_only = false;
    for (int i = 1; i < argc; ++i) {
      if (!std::strcmp(argv[i], "--steps") && i + 1 < argc) steps = std::atoi(argv[++i]);
      else if (!std::strcmp(argv[i], "--ctx") && i + 1 < argc) ctx = std::atoi(argv[++i]);
      else if (!std::strcmp(argv[i], "--proxy-only")) proxy_only = true;
      else throw Error(std::string("fidelity_report: unknown argument '") + argv[i] +
                       "' (--steps N, --ctx C, --proxy-only)");
    }
    const model::ModelSpec spec = model::load_model("spark-x2.5-1.7b");
    const Row rows[] = {
        {"fp16", model::Precision::kFp16, nx::WeightQuantizer::kPerChannel},
        {"w8a16 per channel", model::Precision::kW8A16, nx::WeightQuantizer::kPerChannel},
        {"w4a16 per channel", model::Precision::kW4A16, nx::WeightQuantizer::kPerChannel},
        {"w4a16 block 32 (LPBQ)", model::Precision::kW4A16, nx::WeightQuantizer::kBlock32},
        {"w4a16 block 64 (LPBQ)", model::Precision::kW4A16, nx::WeightQuantizer::kBlock64},
        // Issue 34's forms: the cache's dtype at the boundary, and block weights through the axis.
        {"fp16, kv u16", model::Precision::kFp16, nx::WeightQuantizer::kPerChannel, {"kv_dtype=u16"}},
        {"fp16, kv u8", model::Precision::kFp16, nx::WeightQuantizer::kPerChannel, {"kv_dtype=u8"}},
        {"w8a16 per channel, kv u16", model::Precision::kW8A16, nx::WeightQuantizer::kPerChannel, {"kv_dtype=u16"}},
        {"w8a16 per channel, kv u8", model::Precision::kW8A16, nx::WeightQuantizer::kPerChannel, {"kv_dtype=u8"}},
        {"w4a16 weight_quant=block16", model::Precision::kW4A16, nx::WeightQuantizer::kPerChannel, {"weight_quant=block16"}},
        {"w4a16 weight_quant=block32", model::Precision::kW4A16, nx::WeightQuantizer::kPerChannel, {"weight_quant=block32"}},
        {"w4a16 weight_quant=block64", model::Precision::kW4A16, nx::WeightQuantizer::kPerChannel, {"weight_quant=block64"}},
        {"w4a16 block 64, kv u8", model::Precision::kW4A16, nx::WeightQuantizer::kPerChannel,
         {"weight_quant=block64", "kv_dtype=u8"}},
    };
    constexpr int kRows = sizeof(rows) / sizeof(rows[0]);
    constexpr uint64_t kSeed = 1;
    for (bool proxy : {false, true}) {
      if (proxy_only && !proxy) continue;
      std::cout << "\n" << (proxy ? "select's proxy layer (hidden and MLP widths / 8)" : "full-width layers")
                << ", ctx " << ctx << ", ring, seed " << kSeed << ", 16-bit activations calibrated on "
                << nx::QuantOptions{}.calibration_steps << " steps (other tokens)\n\n";
      std::cout << "| precision, quantizer | sliding SNR | sliding top-5 | sliding top-1 | full SNR | full top-5 | "
                   "full top-1 |\n|---|---|---|---|---|---|---|\n";
      nx::Fidelity f[kRows][2];
      int history[2] = {0, 0};
      for (int li = 0; li < 2; ++li) {
        model::LayerSpec layer = spec.layer(li ? model::LayerType::kFull : model::LayerType::kSliding, ctx);
        if (proxy) {
          layer.hidden = std::max(64, layer.hidden / 8);
          layer.intermediate = std::max(64, layer.intermediate / 8);
        }
        const int n = steps ? steps : nx::fidelity_history(layer);
        history[li] = n;
        if (layer.type == model::LayerType::kFull && layer.context > n) {
          // As select's check: the slots past the history are never written (masked: no effect).
          layer.context = n;
          layer.cache_entries = n - 1;
        }
        for (int r = 0; r < kRows; ++r) {
          nx::QuantOptions q;
          q.w4 = rows[r].quantizer;
          std::vector<std::string> sets = rows[r].sets;
          sets.push_back(std::string("precision=") + model::to_string(rows[r].precision));
          f[r][li] = nx::variant_fidelity(layer, model::parse_variant("ring", sets), n, kSeed, q);
        }
      }
      std::cout << std::fixed;
      for (int r = 0; r < kRows; ++r) {
        std::cout << "| " << rows[r].name;
        for (int li = 0; li < 2; ++li)
          std::cout << " | " << std::setprecision(1) << f[r][li].snr_db << " dB | " << std::setprecision(0)
                    << 100 * f[r][li].topk_agreement << "% | " << 100 * f[r][li].top1_agreement << "%";
        std::cout << " |\n";
      }
      std::cout << "\nhistory: sliding " << history[0] << " steps (window " << spec.sliding_window.value_or(0) << ", "
                << spec.layer(model::LayerType::kSliding, ctx).cache_entries << " ring slots: wraps), full "
                << history[1] << " steps (its slots past them are masked; run at ctx " << history[1] << ")\n";
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "fidelity_report: " << e.what() << "\n";
    return 2;
  }
}
