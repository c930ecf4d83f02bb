#include "db/profile.h"

#include "support/median.h"

#include <algorithm>

#include "support/error.h"

namespace layoutx::db {

const char* to_string(Format f) {
  switch (f) {
    case Format::kYaml: return "yaml";
    case Format::kCsv: return "csv";
    case Format::kQnnCsv: return "qnn-csv";
    case Format::kAihubJson: return "aihub-json";
    case Format::kOrtJson: return "ort-json";
  }
  return "?";
}

Format parse_format(std::string_view s) {
  for (Format f : {Format::kYaml, Format::kCsv, Format::kQnnCsv, Format::kAihubJson, Format::kOrtJson})
    if (s == to_string(f)) return f;
  throw Error("--format: unknown format \"" + std::string(s) + "\" (auto, yaml, csv, qnn-csv, aihub-json, ort-json)");
}

Profile parse_profile(Format f, std::string_view text, const std::string& name) {
  switch (f) {
    case Format::kYaml: return parse_measurement_yaml(text, name);
    case Format::kCsv: return parse_measurement_csv(text, name);
    case Format::kQnnCsv: return parse_qnn_csv(text, name);
    case Format::kAihubJson: return parse_aihub_json(text, name);
    case Format::kOrtJson: return parse_ort_json(text, name);
  }
  throw Error(name + ": unknown format");
}

double median(std::vector<double> v) { return layoutx::median(std::move(v)); }

}  // namespace layoutx::db
