// Every prediction of explorer_bench's BM_FullSweep, written out exactly (issue 34's speed work
// must not change one): per point (440k of them) one line with its key (model, precision,
// variant, context, layer type), the evaluation's status, latency, interval, floor, legality
// outcome, and a 64-bit FNV-1a hash each of its legality reasons, op costs (names, kinds,
// classes, ms) and design row (their bytes). Doubles in hexadecimal ("%a"), so two dumps are
// equal iff every figure is bit-identical (the hashed parts up to a hash collision): dump before
// and after a change to the predictor and `cmp` the files (about 100 MB).
//   sweep_dump [--every N] > file     (--every N: every Nth variant only, a quicker subset)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "costmodel/hypothesis_predictor.h"
#include "costmodel/predictor_factory.h"
#include "costmodel/public_records.h"
#include "explorer/composition.h"
#include "explorer/design_space.h"
#include "explorer/evaluator.h"
#include "explorer/public_joint.h"
#include "model/model_loader.h"

namespace {

using namespace layoutx;

// What BM_FullSweep sweeps with: the team's mixture weighed by the public records.
std::unique_ptr<costmodel::Predictor> default_predictor() {
  std::ostringstream log;
  const auto team = costmodel::load_default_hypothesis_predictor(log);
  const auto device = costmodel::load_device_named(costmodel::kDefaultDevice);
  return explorer::public_joint_predictor(
      *team, explorer::public_joint_weights(*team, costmodel::shipped_public_timings(), device).weights);
}

// FNV-1a over bytes, continued from `h`.
uint64_t fnv(uint64_t h, const void* data, size_t n) {
  const auto* b = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}
uint64_t fnv(uint64_t h, const std::string& s) { return fnv(h, s.data(), s.size() + 1); }  // with its NUL
constexpr uint64_t kFnvStart = 0xcbf29ce484222325ull;

void print(const explorer::Evaluation& e) {
  const costmodel::Prediction& p = e.prediction;
  uint64_t reasons = fnv(kFnvStart, e.error), ops = kFnvStart;
  for (const std::string& r : p.legality.reasons) reasons = fnv(reasons, r);
  for (const costmodel::OpCost& c : p.ops) {
    ops = fnv(fnv(fnv(ops, c.name), std::string(c.kind)), std::string(c.op_class));
    ops = fnv(ops, &c.ms, sizeof c.ms);
  }
  const uint64_t row = fnv(kFnvStart, p.design_row.data(), p.design_row.size() * sizeof(double));
  std::printf(" status %d lat %a low %a high %a level %a floor %a id %s compiles %s reasons %zu:%016llx ops %zu:%016llx "
              "row %zu:%016llx\n",
              static_cast<int>(e.status), p.latency_ms, p.low_ms, p.high_ms, p.interval_level, p.floor_ms,
              p.calibration_id.c_str(), costmodel::to_string(p.legality.compiles), p.legality.reasons.size(),
              static_cast<unsigned long long>(reasons), p.ops.size(), static_cast<unsigned long long>(ops),
              p.design_row.size(), static_cast<unsigned long long>(row));
}

}  // namespace

int main(int argc, char** argv) {
  size_t every = 1;
  if (argc == 3 && std::strcmp(argv[1], "--every") == 0) every = std::strtoul(argv[2], nullptr, 10);
  if (every == 0 || (argc != 1 && argc != 3)) {
    std::fprintf(stderr, "usage: sweep_dump [--every N]\n");
    return 2;
  }
  const auto pr = default_predictor();
  const std::vector<std::string> names = {"spark-x2.5-1.7b", "spark-x2.5-4b", "gemma-3-1b"};  // as explorer_bench
  const model::Precision precisions[] = {model::Precision::kFp16, model::Precision::kW8A16, model::Precision::kW4A16};
  const auto ctxs = explorer::sweep_contexts(512, 131072);
  explorer::Evaluator ev(*pr);
  for (const std::string& name : names) {
    const model::ModelSpec m = model::load_model(name);
    for (auto p : precisions) {
      const auto variants = explorer::meaningful_variants(p);
      for (size_t i = 0; i < variants.size(); i += every)
        for (int ctx : ctxs)
          for (auto t : {model::LayerType::kSliding, model::LayerType::kFull}) {
            if (m.count(t) == 0 || (m.sliding_window && ctx < *m.sliding_window)) continue;
            std::printf("%s %s %s %d %s", name.c_str(), model::to_string(p), variants[i].key().c_str(), ctx,
                        model::to_string(t));
            print(ev.evaluate(m.layer(t, ctx), variants[i]));
          }
    }
  }
  return 0;
}
