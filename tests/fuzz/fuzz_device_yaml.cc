// libFuzzer target for costmodel::load_device_text (built by the CMake option LAYOUTX_FUZZ, see scripts/fuzz):
// a device file is what a user copies and edits to add a device (README, "A device is a YAML file").
// Contract under test: any input either loads or throws layoutx::Error; anything else (another
// exception, a crash, an ASan report, a hang, an allocation over the RSS limit) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "costmodel/device_spec.h"
#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    layoutx::costmodel::DeviceSpec d = layoutx::costmodel::load_device_text(text, "fuzz.yaml");
    // A device that loads also splits into its hypotheses without anything but an Error.
    for (const auto& h : d.hypotheses.all()) layoutx::costmodel::with_hypothesis(d, h);
  } catch (const layoutx::Error&) {
    // rejected with a message: the expected outcome for bad input
  }
  return 0;
}
