#include "costmodel/measurement_files.h"

#include "support/error.h"
#include "support/paths.h"

namespace layoutx::costmodel {

MeasurementFiles read_measurement_files(const std::vector<std::string>& files, const std::string& device_to_check) {
  MeasurementFiles in;
  for (const auto& f : files) {
    in.bytes.push_back(read_text_file(f));
    const std::string& text = in.bytes.back();
    if (!device_to_check.empty()) check_measurement_device_text(text, f, device_to_check);
    auto r = load_measurements_text(text, f);
    in.records.insert(in.records.end(), r.begin(), r.end());
    for (const auto& [n, name] : load_export_names_text(text, f))
      if (!in.export_names.emplace(n, name).second && in.export_names[n] != name)
        throw Error(f + ": exports: export " + std::to_string(n) + " is named '" + name + "', another file names it '" +
                    in.export_names[n] + "'");
  }
  return in;
}

}  // namespace layoutx::costmodel
