// The one reader of our measurement YAML: the shape of shared/data/spark-s25-calibration.yaml and
// configs/calibration/*-measurements.yaml. It reads every key the format has, checks each value
// (file:line:col messages, unknown keys are errors, all collected: style.md) and returns the
// document as written. Its two consumers add their own requirements on top:
//   - costmodel/measurements.h (calibration): every record has an id, a stated context and, for a
//     share, lowered-op globs (`ops`), and it names one graph;
//   - db/ingest_yaml.cc (ingest): the shared data's looser records (no id, `context: unstated`,
//     a share described in words by `op`, `layer: any`) are stored as they are.
// Record shape: {id?, layer, context | cache_entries, variant axes flat or in `variant: {...}`,
// precision (flat or in the variant), ms | us, samples?, export?} in layer_latency; {id?, layer,
// context?, axes, ops: [globs] | op: words, share | share_min + share_max, export?} in op_share; {precision, form?,
// variant?, result: ok | fail | contested, exit_code?, message?} in compile; parity is allowed,
// not read.
// `export: N` (an integer, 1 <= N <= limits::kMaxExports) says which of the device's exports the
// record was measured on, in the order they were made (1 the first): the design history that
// `calibrate` replays (fit on the exports before N, predict export N). Optional, but all or none:
// when one timing or share of a document names its export, every one must (a record left out by
// mistake would silently leave the replay). A compile record's `form` is prose: written unquoted in a flow mapping, a comma in it
// splits it into keys without values; those are joined back into `form`, with a warning.
#pragma once
#include <yaml-cpp/yaml.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/variant.h"
#include "support/error.h"

namespace layoutx::model {

// The variant a record names: axes not named take their defaults.
struct RecordVariant {
  Variant variant;
  std::string selector;        // the named axes, "axis=value,...", precision last
  bool has_precision = false;  // precision was named
};

struct TimingEntry {
  std::string where;  // "file:line:col" of the record
  int line = 0;       // 1-based
  std::string id;     // "" when not given
  std::string layer;  // "sliding" | "full" ("" when missing: an error was recorded)
  std::optional<int> context;        // tokens; absent or "unstated"
  std::optional<int> cache_entries;  // a stated fact of the source
  RecordVariant variant;
  double ms = 0;  // in ms whatever the document's unit (> 0)
  int samples = 1;
  std::optional<int> export_index;  // `export: N`: the device's N-th export (1-based), if stated
};

struct ShareEntry {
  std::string where;
  std::string id;
  std::string layer;  // "sliding" | "full" | "any"
  std::optional<int> context;
  RecordVariant variant;
  std::vector<std::string> ops;  // lowered-op name globs (configs/calibration's shape)
  std::string op;                // the op in words (shared/data's shape)
  double share_min = 0, share_max = 0;  // equal for a point share
  bool band = false;                    // given as share_min / share_max
  std::optional<int> export_index;      // `export: N`, as in TimingEntry
};

struct CompileEntry {
  std::string where;
  std::string precision;    // canonical precision name
  std::string form;         // the form in words ("" when not given)
  std::string variant_key;  // canonical key ("" when not given)
  std::string result = "ok";  // "ok" | "fail" | "contested" (the records themselves disagree)
  std::optional<int> exit_code;
  std::string message;
};

struct MeasurementDocument {
  std::string file;
  std::optional<int> version;
  std::string model;
  std::string device_id;           // `device: name` (configs/calibration's shape)
  std::string device_description;  // `device: {name, soc, ...}` (shared/data's shape), flattened
  std::string runtime;             // device.runtime
  std::string notes;
  // The fit's noise assumptions (configs/calibration's `noise:`), as written.
  std::optional<double> timing_rel_sd, share_sd;
  std::vector<TimingEntry> timings;
  std::vector<ShareEntry> shares;
  std::vector<CompileEntry> compiles;
  // `exports:` [{export: N, name: text}]: what each export of the design history is called, for
  // the replay's labels ("roll -> score-join"). Optional; names unique per N.
  std::map<int, std::string> export_names;
  // What was read in a way the author may not have meant ("file:line:col: key: what"), for the
  // consumer to print; never a reason to refuse the file.
  std::vector<std::string> warnings;
};

// What a consumer requires beyond the format itself.
struct DocumentRules {
  // Calibration: `version`, each record's `id` and `context` are required, a share names its
  // lowered ops (`ops`, not `op`) and one layer type (not `any`).
  bool calibration = false;
};

// Reads `root` (parsed from `file`); every problem goes to `errors`. Records with a problem are
// left out: callers throw when `errors` is not empty.
MeasurementDocument read_measurement_document(const YAML::Node& root, const std::string& file,
                                              const DocumentRules& rules, ErrorList& errors);

}  // namespace layoutx::model
