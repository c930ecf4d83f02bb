// libFuzzer target for the safetensors reader (model::numerics::SafetensorsFile, what `emit --weights`
// and `parity --weights` open) and the weight map beside a checkpoint (load_weight_map_text). Built by the CMake option LAYOUTX_FUZZ
// (scripts/fuzz). The input is split at the first NUL byte: before
// it, a weight map's text; after it, the checkpoint's bytes, written to a file the reader opens.
// Contract under test: any input either loads (and every tensor reads) or throws layoutx::Error;
// anything else (another exception, a crash, an ASan report, a hang, an allocation over the RSS
// limit) is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "model/numerics/safetensors.h"
#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string map_text = nul == std::string::npos ? input : input.substr(0, nul);
  const std::string file_bytes = nul == std::string::npos ? input : input.substr(nul + 1);
  try {
    layoutx::model::numerics::load_weight_map_text(map_text, "fuzz.weights.yaml");
  } catch (const layoutx::Error&) {
  }
  static const std::string path = "/tmp/layoutx-fuzz-" + std::to_string(getpid()) + ".safetensors";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(file_bytes.data(), static_cast<std::streamsize>(file_bytes.size()));
  }
  try {
    layoutx::model::numerics::SafetensorsFile f(path);
    for (const auto& [name, entry] : f.entries()) {
      try {
        f.read(name);
      } catch (const layoutx::Error&) {
        // an unsupported dtype: rejected with a message
      }
    }
  } catch (const layoutx::Error&) {
    // rejected with a message: the expected outcome for bad input
  }
  return 0;
}
