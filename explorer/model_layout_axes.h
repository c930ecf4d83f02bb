// The model-level axes of a whole-model layout (explorer/model_layout.h): the partition into
// context binaries, the LM head's precision, what the host does with the K/V and what a step's
// time includes. Header-only, so that the layout file's reader (layout_file_read.cc, linked alone
// by its fuzz target) holds and spells them too.
#pragma once
#include <string>

#include "model/variant.h"
#include "support/error.h"

namespace layoutx::explorer {

// What the host does with a new_entry layer's K/V each token: writes it into its slot (a ring
// slot, or the append position: in place) or shifts the window one slot with a memmove first
// (GenieX's sliding windows). A window-returning layer (returns=window) hands back its whole
// window, which the host copies into the next step's input either way.
enum class KvUpdate { kInPlace, kShift };
inline const char* to_string(KvUpdate u) { return u == KvUpdate::kInPlace ? "in_place" : "shift"; }
inline KvUpdate parse_kv_update(const std::string& s, const std::string& what) {
  if (s == "in_place") return KvUpdate::kInPlace;
  if (s == "shift") return KvUpdate::kShift;
  throw Error(what + ": expected in_place or shift, got '" + s + "'");
}

// What a step's time includes: graph execution only (AI Hub's and per-part profiles), or the
// runner end to end (host calls, the KV update, sampling), as tokens/s figures of a runner are.
enum class StepScope { kGraphs, kRunner };
inline const char* to_string(StepScope s) { return s == StepScope::kGraphs ? "graphs" : "runner"; }
inline StepScope parse_step_scope(const std::string& s, const std::string& what) {
  if (s == "graphs") return StepScope::kGraphs;
  if (s == "runner") return StepScope::kRunner;
  throw Error(what + ": expected graphs or runner, got '" + s + "'");
}

// The model-level axes themselves: what a whole-model layout (ModelLayout) and its record in a
// layout file (WholeModelRecord) both hold.
struct ModelAxes {
  int layers_per_part = 1;      // consecutive decoder layers per context binary; 0: all in one
  bool embed_in_first = false;  // the embedding gather in the first part (else a part of its own)
  bool head_in_last = false;    // final norm + LM head in the last part (else a part of its own)
  model::Precision head_precision = model::Precision::kW4A16;
  KvUpdate kv_update = KvUpdate::kInPlace;
  StepScope scope = StepScope::kRunner;
};

}  // namespace layoutx::explorer
