#include "costmodel/save_advice.h"

#include <filesystem>

#include <yaml-cpp/yaml.h>

namespace layoutx::costmodel {

std::string saved_fit_owner(const std::string& path) {
  std::error_code ec;
  if (path.empty() || !std::filesystem::is_regular_file(path, ec)) return "";
  try {
    YAML::Node n = YAML::LoadFile(path);
    if (!n.IsMap()) return "";
    if (n["device"] && n["device"].IsScalar()) return n["device"].Scalar();
    // A hypotheses document: each member holds one calibration document as text.
    const YAML::Node members = n["members"];
    if (members && members.IsSequence() && members.size() > 0 && members[0]["calibration"] &&
        members[0]["calibration"].IsScalar()) {
      YAML::Node cal = YAML::Load(members[0]["calibration"].Scalar());
      if (cal.IsMap() && cal["device"] && cal["device"].IsScalar()) return cal["device"].Scalar();
    }
  } catch (const YAML::Exception&) {
  }
  return "";
}

std::string others_saved_fit(const DeviceSpec& device) {
  for (const std::string* file : {&device.calibration.saved, &device.calibration.hypotheses}) {
    if (file->empty()) continue;
    const std::string path = device_file(*file);
    const std::string owner = saved_fit_owner(path);
    if (!owner.empty() && owner != device.name) return path + " is the calibration of '" + owner + "'";
  }
  return "";
}

std::string save_advice(const DeviceSpec& device) {
  const std::string flag = device.name == kDefaultDevice ? "" : " --device " + device.source;
  const std::string other = others_saved_fit(device);
  if (other.empty()) return "run `layoutx calibrate" + flag + " --update-shipped` to save";
  return other + ", not of '" + device.name + "': give " + device.source +
         " its own calibration.saved and calibration.hypotheses paths, then run `layoutx calibrate" + flag +
         " --update-shipped` to save (or `layoutx calibrate" + flag + " --out FILE` and --calibration FILE)";
}

}  // namespace layoutx::costmodel
