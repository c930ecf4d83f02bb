// Calibration measurements: the records the cost model is fitted to. One plain struct so that
// other sources (the database, issue #6) can append rows to what the YAML files hold.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "model/graph.h"
#include "model/model_spec.h"
#include "model/variant.h"

namespace layoutx::costmodel {

struct MeasurementRecord {
  enum class Kind {
    kLayerTime,  // one layer's decode-step latency
    kOpShare,    // the fraction of a layer's latency spent in the ops named by `ops`
  };
  Kind kind = Kind::kLayerTime;
  std::string id;      // unique within a calibration set (e.g. "full4k-w8a16")
  std::string source;  // where it came from, for messages: "file:line:col" or "db:measurements/17"
  std::string model = "spark-x2.5-1.7b";  // --model value (model::load_model)
  model::LayerType layer = model::LayerType::kSliding;
  int context = 4096;        // tokens; the graph's cache is window-1 (sliding) or context-1 (full)
  int cache_entries = 0;     // if > 0: checked against the built graph (a stated fact of the source)
  model::Variant variant;    // every axis, precision included
  double ms = 0;             // kLayerTime: measured latency in ms (> 0)
  std::vector<std::string> ops;  // kOpShare: globs over lowered op names (costmodel/lowering.h)
  double share = 0;          // kOpShare: measured share in [0, 1] (a band's midpoint)
  // Standard deviation of the measurement: kLayerTime relative to ms, kOpShare absolute.
  double sd = 0;
  // Which of the device's exports it was measured on (the file's `export: N`, 1 = the first);
  // 0 when not stated (a file without export tags, the database). Only calibrate's replay reads
  // it (fit on exports < k, predict export k); it is not part of canonical_text: the fit does
  // not depend on it, so tagging a file leaves its calibration's data hash as it was.
  int export_index = 0;
};

// What each export of the design history is called (the measurement file's `exports:`), by its
// number: the replay's labels ("roll -> score-join").
using ExportNames = std::map<int, std::string>;

// "layer_time" / "op_share".
const char* to_string(MeasurementRecord::Kind k);

// The graph a record was measured on. Model specs are cached by name (not thread-safe: the
// calibration runs on one thread; OpLevelPredictor::predict does not use this).
model::LayerGraph build_graph(const MeasurementRecord& r);
// The layer a record was measured on: its model (loaded by the record's name) at its layer type
// and context. Throws Error if that model does not load or build the layer.
model::LayerSpec measured_layer(const MeasurementRecord& r);
// Identity of that graph: model, layer type, cache entries and the variant key. Two records
// with the same key were measured on the same graph.
std::string graph_key(const MeasurementRecord& r);

// Reads a measurement file (configs/calibration/*-measurements.yaml; the schema is in the
// shipped file's comments), then checks every record against the graph it names (the graph
// builds, cache_entries agrees, a share's ops match at least one lowered op, a share's layer
// has a timing). Throws Error listing every problem, each as "file:line:col: key: what".
std::vector<MeasurementRecord> load_measurements(const std::string& path);
std::vector<MeasurementRecord> load_measurements_text(const std::string& text, const std::string& name);
// The export names a measurement file gives (its `exports:`; empty when it gives none). Throws
// Error as load_measurements_text does for a file that does not read.
ExportNames load_export_names_text(const std::string& text, const std::string& name);
// Throws Error ("file:line:col: device: ...") when the file names a device (`device: NAME`)
// other than `device`, the one being fitted: its timings are another phone's. A file that names
// none, or describes its phone in prose (`device: {name: ..., soc: ...}`), is taken as given.
void check_measurement_device_text(const std::string& text, const std::string& name, const std::string& device);
// The records as the file states them, without the graph checks: for a file a loaded predictor
// has already vouched for (its calibration's source hash covers these bytes, or it refitted on
// them), where building every record's graph again would only cost time.
std::vector<MeasurementRecord> load_measurements_unchecked(const std::string& path);

// The graph checks above on records from any source; throws Error naming each record's source.
void check_against_graphs(const std::vector<MeasurementRecord>& records);

// Canonical text of the records (ids, graphs, values, sds; not comments or order of keys):
// what the calibration's data hash covers.
std::string canonical_text(const std::vector<MeasurementRecord>& records);

}  // namespace layoutx::costmodel
