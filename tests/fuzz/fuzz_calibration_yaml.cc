// libFuzzer target for the saved calibrations every verb predicts with (built by the CMake option LAYOUTX_FUZZ,
// see scripts/fuzz): a single calibration (costmodel::parse_calibration) or a
// hypotheses document (costmodel::parse_hypotheses_document), read for the shipped galaxy-s25 device
// and rules, as `--calibration FILE` and `--db` read them.
// Contract under test: any input either loads or throws layoutx::Error; anything else (another
// exception, a crash, an ASan report, a hang, an allocation over the RSS limit) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "costmodel/calibration.h"
#include "costmodel/device_spec.h"
#include "costmodel/hypotheses_document.h"
#include "costmodel/legality.h"
#include "support/error.h"

namespace {
struct Shipped {
  layoutx::costmodel::DeviceSpec device = layoutx::costmodel::load_device_named("galaxy-s25");
  layoutx::costmodel::RuleSet rules =
      layoutx::costmodel::load_rules(layoutx::costmodel::device_file(device.calibration.rules));
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Shipped shipped;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    if (layoutx::costmodel::is_hypotheses_document(text))
      layoutx::costmodel::parse_hypotheses_document(text, "fuzz.yaml", shipped.device, shipped.rules);
    else
      layoutx::costmodel::parse_calibration(text, "fuzz.yaml", shipped.device);
  } catch (const layoutx::Error&) {
    // rejected with a message: the expected outcome for bad input
  }
  return 0;
}
