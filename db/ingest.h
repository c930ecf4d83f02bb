// Ingest: one measurement file into the database, in one transaction, idempotent by content
// hash (SHA-256). Parse first (a malformed file throws before anything is written), then store.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/profile.h"
#include "db/sqlite.h"

namespace layoutx::db {

// What the command line says about the files (`layoutx ingest --device --variant ...`).
struct IngestContext {
  std::string device;                  // required: our device id, e.g. galaxy-s25
  std::string variant;                 // preset or canonical key; required for one-graph profiles
  std::string layer;                   // sliding / full; required for one-graph profiles
  std::optional<int> ctx;              // required for one-graph profiles
  std::string precision;               // overrides the variant's precision when set
  std::string model = "spark-x2.5-1.7b";
  std::optional<Format> format;        // unset: detect
  std::string notes;
  // A file already ingested (same SHA-256) whose records this command line would store under
  // another device/model/variant/layer/ctx: false refuses it (Error naming the stored record and
  // --replace), true deletes the stored run and stores the file again, in one transaction.
  bool replace = false;
};

struct IngestResult {
  std::string path;
  std::string hash;
  Format format = Format::kYaml;
  std::string boundary;
  bool skipped = false;       // the same content was ingested before, stored as this command line says
  int64_t replaced_run = 0;   // with IngestContext::replace: the run deleted (0: none)
  std::string device;         // the device the records are (or were) stored under
  int64_t run_id = 0;         // the new run, or the existing one when skipped
  size_t layers = 0, ops = 0, shares = 0, compiles = 0;
  std::vector<std::string> warnings;  // the parser's (Profile::warnings)
};

// The format of a file from its name and first bytes: .yaml/.yml -> yaml; .json -> aihub-json
// when it has "execution_summary", ort-json when it is an array; .csv -> qnn-csv when a line
// starts "Msg Timestamp", else csv. Throws Error when it cannot tell.
Format detect_format(const std::string& path, std::string_view text);

// Reads `path` and ingests it. Throws Error (file:line: what) and leaves the database untouched.
IngestResult ingest_file(Connection& c, const std::string& path, const IngestContext& ctx);
// Same for text already in memory; `name` is recorded as the source path.
IngestResult ingest_text(Connection& c, std::string_view text, const std::string& name, const IngestContext& ctx);
// Stores an already parsed profile (the benchmark times parse and store separately).
IngestResult store_profile(Connection& c, const Profile& p, const std::string& name, const std::string& hash,
                           const IngestContext& ctx);

// Row ids, created on first use.
int64_t device_id(Connection& c, const std::string& name, const std::string& description = "");
int64_t model_id(Connection& c, const std::string& name);
int64_t variant_id(Connection& c, const std::string& key);

}  // namespace layoutx::db
