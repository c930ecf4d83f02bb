// libFuzzer target for explorer::read_layout_file_text (built by the CMake option LAYOUTX_FUZZ, see scripts/fuzz).
// Contract under test: any input either reads or throws layoutx::Error; anything else (another
// exception, a crash, an ASan report, a hang) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "explorer/layout_file.h"
#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    layoutx::explorer::read_layout_file_text(text, "fuzz.yaml");
  } catch (const layoutx::Error&) {
    // rejected with a message: the expected outcome for bad input
  }
  return 0;
}
