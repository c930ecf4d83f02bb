// libFuzzer target for model::import_hf_config_text (built by the CMake option LAYOUTX_FUZZ, see scripts/fuzz).
// Contract under test: any input either imports or throws layoutx::Error; anything else (another
// exception, a crash, an ASan report, a hang, an allocation over the RSS limit) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "model/model_loader.h"
#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    layoutx::model::import_hf_config_text(text, "fuzz.json");
  } catch (const layoutx::Error&) {
    // rejected with a message: the expected outcome for bad input
  }
  return 0;
}
