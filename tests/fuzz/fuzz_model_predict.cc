// libFuzzer target for what `predict --model X` does with a model it accepted (built by the CMake option
// LAYOUTX_FUZZ, see scripts/fuzz): a HF config.json (import_hf_config_text) or a model spec
// (load_model_yaml_text), then each of its layer types built at ctx 1024 and 4096 as roll, ring and
// score-join at every precision, and priced by the shipped galaxy-s25 hypotheses. The parser fuzzers stop at the import; this one goes
// on into the builder, the lowering, the live set and the features with the odd-but-accepted shapes
// an import lets through.
// Contract under test: any input either is refused or predicts, throwing nothing but layoutx::Error;
// anything else (another exception, a crash, an ASan report, a hang, an allocation over the RSS
// limit) is a finding.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>

#include "costmodel/hypothesis_predictor.h"
#include "costmodel/predictor_factory.h"
#include "model/builder.h"
#include "model/model_loader.h"
#include "model/variant.h"
#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::unique_ptr<layoutx::costmodel::HypothesisPredictor> predictor = [] {
    std::ostringstream log;
    return layoutx::costmodel::load_default_hypothesis_predictor(log);
  }();
  const std::string text(reinterpret_cast<const char*>(data), size);
  namespace m = layoutx::model;
  try {
    const size_t first = text.find_first_not_of(" \t\r\n");
    const bool json = first != std::string::npos && text[first] == '{';
    const m::ModelSpec spec =
        json ? m::import_hf_config_text(text, "fuzz.json") : m::load_model_yaml_text(text, "fuzz.yaml");
    for (m::LayerType t : {m::LayerType::kSliding, m::LayerType::kFull}) {
      if (spec.count(t) == 0) continue;
      for (int ctx : {1024, 4096}) {
        if (spec.sliding_window && ctx < *spec.sliding_window) continue;
        for (const char* preset : {"roll", "ring", "score-join"})
          for (m::Precision p : {m::Precision::kFp16, m::Precision::kW8A16, m::Precision::kW4A16}) {
            try {
              predictor->predict(m::build_layer_graph(spec.layer(t, ctx), m::preset(preset, p)));
            } catch (const layoutx::Error&) {
              // a layer the tool refuses to build or price, with a message
            }
          }
      }
    }
  } catch (const layoutx::Error&) {
    // rejected with a message: the expected outcome for bad input
  }
  return 0;
}
