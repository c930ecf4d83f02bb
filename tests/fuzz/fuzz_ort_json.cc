// libFuzzer target for db::parse_ort_json (built by the CMake option LAYOUTX_FUZZ, see scripts/fuzz).
// Contract under test: any input either parses or throws layoutx::Error; anything else (another
// exception, a crash, an ASan report, a hang) is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "db/profile.h"
#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    layoutx::db::parse_ort_json(text, "fuzz");
  } catch (const layoutx::Error&) {
    // rejected with a message: the expected outcome for bad input
  }
  return 0;
}
