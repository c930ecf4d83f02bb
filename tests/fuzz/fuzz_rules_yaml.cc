// libFuzzer target for costmodel::load_rules_text, the converter's legality rules (configs/rules/*.yaml;
// built by the CMake option LAYOUTX_FUZZ, see scripts/fuzz).
// Contract under test: any input either loads or throws layoutx::Error; anything else (another
// exception, a crash, an ASan report, a hang, an allocation over the RSS limit) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "costmodel/legality.h"
#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    layoutx::costmodel::load_rules_text(text, "fuzz.yaml");
  } catch (const layoutx::Error&) {
    // rejected with a message: the expected outcome for bad input
  }
  return 0;
}
