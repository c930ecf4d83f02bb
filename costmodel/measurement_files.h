// The measurement files a calibration is fitted on (calibrate's --data, or the device's own
// calibration.measurements), read once each: their records, their bytes (what fit_stamp hashes,
// costmodel/freshness.h) and the names they give the design history's exports (the replay's labels).
#pragma once
#include <string>
#include <vector>

#include "costmodel/measurements.h"

namespace layoutx::costmodel {

struct MeasurementFiles {
  std::vector<MeasurementRecord> records;  // every file's, in file order
  std::vector<std::string> bytes;          // each file's text, in file order
  ExportNames export_names;                // from every file
};

// Reads `files` in order. With `device_to_check` non-empty each file must be that device's
// timings (check_measurement_device_text: a file given on the command line); empty, they are the
// device's by its device file's word (its calibration.measurements; a renamed copy shares it).
// Throws Error naming the file: one that does not read, another device's timings, or an export
// number two files name differently.
MeasurementFiles read_measurement_files(const std::vector<std::string>& files, const std::string& device_to_check);

}  // namespace layoutx::costmodel
