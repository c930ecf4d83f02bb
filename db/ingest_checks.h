// What ingest refuses before anything is written: layer timings that cannot be real, models it
// does not know, and sliding layers whose cache is shorter than the window they slide over.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "db/profile.h"
#include "model/limits.h"

namespace layoutx::db {

// Timings are one decode step of one layer: above 0 and at most this (10 s; the slowest layer
// on record is a few ms, so anything near this is a unit mistake such as microseconds as ms).
inline constexpr double kMaxLayerMs = model::limits::kMaxLayerMs;

// The shipped model names (configs/models/<name>.yaml, without weight maps), sorted.
std::vector<std::string> known_model_names();

// One layer row as it will be stored (the ingest context already applied).
struct LayerRowToStore {
  std::string model, layer_type;
  std::optional<int> cache_entries;
  double ms = 0.0;
  int line = 0;  // where in the file; 0 = the file as a whole (one-graph profiles)
  std::optional<int> ctx;  // the record's context, or --ctx; unset: not stated
};

// Checks every row; throws Error listing each problem as "file:line: what" (name = the file).
//   - ms must be in (0, kMaxLayerMs];
//   - the model must be a shipped model (the known ones are listed);
//   - a sliding layer's stated cache_entries must be at least the model's window - 1;
//   - a context must be in [kMinContext, kMaxContext] (model/limits.h), and a sliding layer's
//     at least the model's window (ModelSpec::check_context, the rule of every verb).
void check_layer_rows(const std::vector<LayerRowToStore>& rows, const std::string& name);

}  // namespace layoutx::db
