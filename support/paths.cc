#include "support/paths.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "support/error.h"

namespace layoutx {

std::string config_dir() {
  if (const char* env = std::getenv("LAYOUTX_CONFIGS"); env && *env) return env;
  return LAYOUTX_CONFIG_DIR;
}

std::string config_path(const std::string& relative) { return config_dir() + "/" + relative; }

std::string shown_path(const std::string& path) {
  const std::string dir = config_dir() + "/";
  return path.rfind(dir, 0) == 0 ? "configs/" + path.substr(dir.size()) : path;
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace layoutx
