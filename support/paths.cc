#include "support/paths.h"

#include <cstdlib>

namespace layoutx {

std::string config_dir() {
  if (const char* env = std::getenv("LAYOUTX_CONFIGS"); env && *env) return env;
  return LAYOUTX_CONFIG_DIR;
}

std::string config_path(const std::string& relative) { return config_dir() + "/" + relative; }

}  // namespace layoutx
