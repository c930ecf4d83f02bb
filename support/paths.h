// Where the shipped configs are: $LAYOUTX_CONFIGS, else the source tree's configs/ (baked in
// at build time), so `layoutx` works from any directory after a build.
#pragma once
#include <string>

namespace layoutx {
std::string config_dir();
// config_dir() + "/" + relative
std::string config_path(const std::string& relative);
}  // namespace layoutx
