// Where the shipped configs are: $LAYOUTX_CONFIGS, else the source tree's configs/ (baked in
// at build time), so `layoutx` works from any directory after a build.
#pragma once
#include <string>

namespace layoutx {
std::string config_dir();
// config_dir() + "/" + relative
std::string config_path(const std::string& relative);
// How outputs name a file: "configs/<relative>" under config_dir() (so a saved calibration or a
// report does not name this machine's paths), else the path as given.
std::string shown_path(const std::string& path);
// The whole file's bytes; throws Error("<path>: cannot open file") if it cannot be read.
std::string read_text_file(const std::string& path);
}  // namespace layoutx
