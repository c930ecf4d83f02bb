// A device's structure switches as one table (like the design-space axes, model/design_space.h):
// how a layer is turned into features, from the device spec's sources, and what a hypothesis may
// flip (costmodel/hypothesis_fit.h). The device YAML's `structure:` keys, the hash text a
// calibration is fitted under (so a changed switch makes a saved calibration stale), the
// structure as it matters for one graph (effective) and the printers all read this table.
//
// Adding a switch: a row in StructureTable::shipped() (structure.cc), an enumerator of Switch and
// an accessor below, and the featurization that reads it (costmodel/features.cc,
// layer_features.cc). Saved calibrations stay fresh: a switch added later is spelled in the hash
// text only off its default (tests/costmodel/structure_test.cc adds a throwaway switch).
#pragma once
#include <array>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "model/variant.h"

namespace layoutx {
class MapReader;
}

namespace layoutx::costmodel {

// 4-bit weights: packed (stream as packed bytes, half of 8-bit: bound by the bytes), expanded
// to 8 bits on the vector unit before the matrix unit (the projection costs the 8-bit bytes),
// expanded only when quantized per output channel (block-quantized LPBQ weights stream packed),
// or expanded only when quantized per channel and read by a MatMul (a 1x1 Conv's stream packed).
enum class W4Weights { kPacked, kExpanded, kExpandedPerChannel, kExpandedMatMul };

// The shipped switches, in table order.
enum class Switch : size_t {
  kTileRows,      // a weight projection's M (1 in decode) padded to this many rows
  kVtcmBudgetMb,  // VTCM left for cache-sized activations, MiB; 0: no live-set terms
  kLiveMinKb,     // a tensor is cache-sized (enters the live set) from this size, KiB
  kW4Weights,     // W4Weights
  kFuseExplicitSoftmax,  // the converter folds max/sub/exp/sum/div into one Softmax
  // A cache-sized graph input arrives flat and must be re-laid into the tiled layout before an
  // op computes on it: an op that copies it (Concat, Slice, Convert, Output) does so as part of
  // its copy; any other reader (a MatMul on the cache itself) pays one re-layout copy of it.
  kRelayoutCacheInputs,
  // Cost model 3 (costmodel/overlap.h): the fraction of the shorter of a layer's memory and
  // compute sides hidden under the longer (0: additive; 1: the busiest side alone), and which
  // side the copies (`unit: copy` coefficients) occupy.
  kOverlap,
  kCopiesOn,
  // heads=per_head (issue 34): how many independent per-head op chains run at once (1: each op
  // pays its dispatch in turn; k: the dispatches of k chains overlap on the vector threads; 0:
  // the chains cost what the grouped form costs, featurized as its grouped twin).
  kHeadChains,
};

// The switches' values, stored by table position (a number; a choice is its index). Structure{}
// is every shipped switch at its default.
struct Structure {
  static constexpr size_t kMaxSwitches = 16;
  Structure();
  explicit Structure(const std::array<double, kMaxSwitches>& values) : v(values) {}
  double get(size_t i) const { return v[i]; }
  void set(size_t i, double x) { v[i] = x; }
  double get(Switch s) const { return v[static_cast<size_t>(s)]; }
  void set(Switch s, double x) { v[static_cast<size_t>(s)] = x; }

  int hmx_tile_rows() const { return static_cast<int>(get(Switch::kTileRows)); }
  double vtcm_budget_mb() const { return get(Switch::kVtcmBudgetMb); }
  double live_min_kb() const { return get(Switch::kLiveMinKb); }
  W4Weights w4_weights() const { return static_cast<W4Weights>(static_cast<int>(get(Switch::kW4Weights))); }
  // Whether a 4-bit weight (per channel, or in blocks of `block` rows) read by a MatMul or, with
  // `conv`, by a 1x1 Conv costs its 8-bit bytes.
  bool w4_expanded(int block, bool conv) const {
    switch (w4_weights()) {
      case W4Weights::kExpanded: return true;
      case W4Weights::kExpandedPerChannel: return block == 0;
      case W4Weights::kExpandedMatMul: return block == 0 && !conv;
      case W4Weights::kPacked: return false;
    }
    return false;
  }
  bool fuse_explicit_softmax() const { return get(Switch::kFuseExplicitSoftmax) != 0; }
  bool relayout_cache_inputs() const { return get(Switch::kRelayoutCacheInputs) != 0; }
  double overlap() const { return get(Switch::kOverlap); }
  bool copies_on_dma() const { return get(Switch::kCopiesOn) == 0; }
  int head_chains_at_once() const { return static_cast<int>(get(Switch::kHeadChains)); }

  bool operator==(const Structure&) const = default;
  std::array<double, kMaxSwitches> v{};
};

// What of a graph decides whether a switch changes its featurization (StructureSwitch::effective).
struct GraphFacts {
  model::Precision precision = model::Precision::kFp16;
  model::SoftmaxForm softmax = model::SoftmaxForm::kExplicit;
  // Whether the graph has a cache input of at least `live_min_kb` KiB that an op other than a
  // copy reads (costmodel/layer_features.h cache_inputs_read_in_place); asked only when needed.
  std::function<bool(double live_min_kb)> reads_cache_in_place;
  bool block_weights = false;  // 4-bit weights quantized in blocks (weight_quant=blockN)
  bool conv_projections = false;  // weight projections written as 1x1 Convs (projection=conv1x1)
  bool per_head = false;       // per-head op chains (heads=per_head)
};

struct StructureSwitch {
  std::string key;        // under `structure:` in the device YAML, e.g. "w4_weights"
  std::string hash_name;  // its name in the hash text, e.g. "w4"
  std::vector<std::string> choices;  // a choice's words, value = index; empty: a number
  bool integer = false;   // a number that must be whole (hmx_tile_rows)
  double min = 0, max = std::numeric_limits<double>::infinity();  // a number's range
  double default_value = 0;
  // Spelled in the hash text even at its default (the switches saved hashes were made with);
  // false for a switch added later, so calibrations saved before it existed stay fresh.
  bool hashed_at_default = false;
  // The value as it matters for a graph's featurization: a value that changes nothing in it
  // cleared to what shares one featurization (e.g. 4-bit handling off a w4a16 graph). nullptr:
  // the value as it is.
  double (*effective)(const Structure& s, double value, const GraphFacts& g) = nullptr;
  std::string meaning;  // one line
};

class StructureTable {
 public:
  // Checks the table: unique keys and hash names, at most Structure::kMaxSwitches, defaults
  // inside their ranges. Throws Error otherwise.
  explicit StructureTable(std::vector<StructureSwitch> switches);
  static const StructureTable& shipped();
  // A copy with one more switch at the end (what the next release would add).
  StructureTable with_switch(StructureSwitch extra) const;
  const std::vector<StructureSwitch>& switches() const { return switches_; }

  Structure defaults() const;
  // A switch's value as text (a choice's word, or the number) and from text (Error naming the
  // key and what is allowed).
  std::string value_text(const Structure& s, size_t i) const;
  // The text a calibration's hash covers: "structure" then "<hash_name> <value>" per switch,
  // in table order (a switch not hashed_at_default only off its default).
  std::string text(const Structure& s) const;
  // The structure as it matters for graph g: each switch's `effective`, in table order.
  Structure effective(const Structure& s, const GraphFacts& g) const;
  // The structure keys present in the map `m` reads (a device's `structure:`, or an option's)
  // override `s`; problems go to m's error list, each naming file:line, key and what is allowed.
  Structure parse(MapReader& m, Structure s) const;

 private:
  std::vector<StructureSwitch> switches_;
};

// Text of the structure (what a calibration's hash covers): StructureTable::shipped().text(s).
std::string to_text(const Structure& s);

}  // namespace layoutx::costmodel
