// What an ingester reads out of one measurement file, before anything touches the database.
// Parsers are pure (text in, Profile out, Error with file:line on bad input), so they can be
// tested and fuzzed without SQLite.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace layoutx::db {

enum class Format { kYaml, kCsv, kQnnCsv, kAihubJson, kOrtJson };
const char* to_string(Format f);  // yaml, csv, qnn-csv, aihub-json, ort-json
// "auto" is not a format: the caller detects it (detect_format in ingest.h).
Format parse_format(std::string_view s);

// One layer's decode-step time (a layer-level measurement).
struct LayerRecord {
  std::string model;        // "" = the ingest context's model
  std::string variant_key;  // "" = the ingest context's variant; else a canonical key
  std::string layer_type;   // sliding / full; "" = the ingest context's
  std::optional<int> ctx;   // tokens; unset = the ingest context's
  std::optional<int> cache_entries;
  double ms = 0.0;          // milliseconds, >= 0
  int samples = 1;
  int line = 0;             // where in the file (for messages)
};

// One op's time in one inference (an op-level measurement). ms and/or cycles.
struct OpRecord {
  int inference = 0;        // 0-based repetition of the graph
  std::string name;
  std::string type;
  std::optional<double> ms;
  std::optional<int64_t> cycles;
  std::string compute_unit;  // NPU/GPU/CPU (AI Hub), HTP (QNN), the provider (ORT)
};

// A share of one layer's time spent in an op (our calibration YAML's op_share).
struct ShareRecord {
  std::string model;
  std::string layer_type;   // sliding / full / any
  std::optional<int> ctx;
  std::string selector;     // the variant axes the record names, "axis=value,..."
  std::string op;
  double share_min = 0.0, share_max = 0.0;  // fractions
};

// A QNN conversion outcome.
struct CompileRecord {
  std::string precision;
  std::string form;          // the op form the source names
  std::string variant_key;   // "" when the outcome is for a form, not one variant
  std::string result = "ok";  // "ok" | "fail" | "contested"
  std::optional<int> exit_code;
  std::string message;
};

struct Profile {
  Format format = Format::kYaml;
  std::string tool;          // "layoutx-yaml", "qnn-profile-viewer", "qai-hub", "onnxruntime", ...
  std::string tool_version;
  std::string boundary;      // one of schema.h boundary_names()
  std::string device;        // our device id when the file names one ("" = from --device)
  std::string device_description;
  std::string notes;
  std::vector<LayerRecord> layers;
  std::vector<OpRecord> ops;
  std::vector<ShareRecord> shares;
  std::vector<CompileRecord> compiles;
  std::vector<std::string> warnings;  // read, but maybe not as meant ("file:line:col: what")
  // Formats that profile one graph (qnn-csv, aihub-json, ort-json) put the graph's total here
  // as a layer record with empty model/variant/layer/ctx, filled from the ingest context.
};

// The parsers. `name` stands for the file in messages ("name:line: what is wrong").
Profile parse_measurement_yaml(std::string_view text, const std::string& name);
Profile parse_measurement_csv(std::string_view text, const std::string& name);
Profile parse_qnn_csv(std::string_view text, const std::string& name);
Profile parse_aihub_json(std::string_view text, const std::string& name);
Profile parse_ort_json(std::string_view text, const std::string& name);
Profile parse_profile(Format f, std::string_view text, const std::string& name);

// Median of a non-empty list (the mean of the middle two for an even count).
double median(std::vector<double> v);

}  // namespace layoutx::db
