#include "costmodel/structure.h"

#include <algorithm>

#include "support/error.h"
#include "support/hash.h"
#include "support/yaml_reader.h"

namespace layoutx::costmodel {

namespace {

std::vector<StructureSwitch> shipped_switches() {
  std::vector<StructureSwitch> t;
  t.push_back({.key = "hmx_tile_rows", .hash_name = "tile_rows", .integer = true, .min = 1, .max = 1024,
               .default_value = 1, .hashed_at_default = true,
               .meaning = "a weight projection's M (1 in decode) padded to this many rows: the HMX computes whole tiles"});
  // The knee only sets the spill and stall features from the live set: applied per member
  // (costmodel/featurization_cache.cc), so any budget featurizes as 1.
  t.push_back({.key = "vtcm_budget_mb", .hash_name = "vtcm_budget_mb", .default_value = 0, .hashed_at_default = true,
               .effective = [](const Structure&, double v, const GraphFacts&) { return v > 0 ? 1.0 : 0.0; },
               .meaning = "VTCM left for cache-sized activations, MiB; 0: no live-set terms"});
  t.push_back({.key = "live_min_kb", .hash_name = "live_min_kb", .default_value = 64, .hashed_at_default = true,
               .meaning = "a tensor is cache-sized (enters the live set) from this size, KiB"});
  // expanded_per_channel is `expanded` for a graph whose 4-bit weights are per channel and
  // `packed` for one with block-quantized weights; expanded_matmul is `packed` for a graph whose
  // projections are 1x1 Convs too: the team's graphs (per channel, MatMul) featurize alike under
  // the last three.
  t.push_back({.key = "w4_weights", .hash_name = "w4",
               .choices = {"packed", "expanded", "expanded_per_channel", "expanded_matmul"},
               .hashed_at_default = true,
               .effective = [](const Structure&, double v, const GraphFacts& g) {
                 if (g.precision != model::Precision::kW4A16) return 0.0;
                 if (v == 2) return g.block_weights ? 0.0 : 1.0;
                 if (v == 3) return g.block_weights || g.conv_projections ? 0.0 : 1.0;
                 return v;
               },
               .meaning = "4-bit weights stream packed, are expanded to 8 bits before the matrix unit, are "
                          "expanded only when quantized per channel, or only when quantized per channel and "
                          "read by a MatMul"});
  t.push_back({.key = "explicit_softmax", .hash_name = "softmax", .choices = {"as_written", "fused"},
               .hashed_at_default = true,
               .effective = [](const Structure&, double v, const GraphFacts& g) {
                 return g.softmax == model::SoftmaxForm::kFused ? 0.0 : v;
               },
               .meaning = "the converter keeps an explicit softmax's ops, or folds them into one Softmax"});
  t.push_back({.key = "cache_inputs", .hash_name = "cache_inputs", .choices = {"read_in_place", "relaid"},
               .effective = [](const Structure& s, double v, const GraphFacts& g) {
                 return v != 0 && g.reads_cache_in_place && g.reads_cache_in_place(s.live_min_kb()) ? v : 0.0;
               },
               .meaning = "a cache-sized graph input an op reads in place is first re-laid into the tiled layout"});
  // How the units' times combine (costmodel/overlap.h): priced per member, never featurized, so
  // every value featurizes alike (the featurization cache shares one lowering).
  t.push_back({.key = "overlap", .hash_name = "overlap", .min = 0, .max = 1, .default_value = 0,
               .effective = [](const Structure&, double, const GraphFacts&) { return 0.0; },
               .meaning = "fraction of the shorter of a layer's memory and compute sides hidden under the longer"});
  t.push_back({.key = "copies_on", .hash_name = "copies_on", .choices = {"dma", "vector"},
               .effective = [](const Structure&, double, const GraphFacts&) { return 0.0; },
               .meaning = "the side copies (unit: copy) occupy: the DMA engine's (memory) or the vector threads' (compute)"});
  // Whether a layer's per-head chains (OpNode::chains) run side by side is not settled by any
  // timing of this device (none has them): a hypothesis axis, the public records weigh it.
  t.push_back({.key = "head_chains", .hash_name = "head_chains", .integer = true, .min = 0, .max = 64,
               .default_value = 1,
               .effective = [](const Structure&, double v, const GraphFacts& g) { return g.per_head ? v : 1.0; },
               .meaning = "per-head op chains running at once: 1, each op pays its dispatch in turn; k, the "
                          "dispatches of k chains overlap; 0, the chains cost what the grouped form's ops cost"});
  return t;
}

std::string or_list(const std::vector<std::string>& words) {
  std::string s;
  for (size_t i = 0; i < words.size(); ++i)
    s += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i];
  return s;
}

}  // namespace

Structure::Structure() {
  static const std::array<double, kMaxSwitches> defaults = StructureTable::shipped().defaults().v;
  v = defaults;
}

StructureTable::StructureTable(std::vector<StructureSwitch> switches) : switches_(std::move(switches)) {
  if (switches_.size() > Structure::kMaxSwitches)
    throw Error("structure table: more than " + std::to_string(Structure::kMaxSwitches) + " switches");
  for (size_t i = 0; i < switches_.size(); ++i) {
    const StructureSwitch& s = switches_[i];
    for (size_t j = 0; j < i; ++j)
      if (switches_[j].key == s.key || switches_[j].hash_name == s.hash_name)
        throw Error("structure table: switch " + s.key + ": listed twice");
    const double top = s.choices.empty() ? s.max : static_cast<double>(s.choices.size()) - 1;
    if (!(s.default_value >= (s.choices.empty() ? s.min : 0) && s.default_value <= top))
      throw Error("structure table: switch " + s.key + ": its default is outside its values");
  }
}

const StructureTable& StructureTable::shipped() {
  static const StructureTable t(shipped_switches());
  return t;
}

StructureTable StructureTable::with_switch(StructureSwitch extra) const {
  std::vector<StructureSwitch> s = switches_;
  s.push_back(std::move(extra));
  return StructureTable(std::move(s));
}

Structure StructureTable::defaults() const {
  std::array<double, Structure::kMaxSwitches> v{};
  for (size_t i = 0; i < switches_.size(); ++i) v[i] = switches_[i].default_value;
  return Structure(v);
}

std::string StructureTable::value_text(const Structure& s, size_t i) const {
  const StructureSwitch& w = switches_[i];
  if (w.choices.empty()) return hash_number(s.get(i));
  const size_t c = static_cast<size_t>(s.get(i));
  return c < w.choices.size() ? w.choices[c] : "?";
}

std::string StructureTable::text(const Structure& s) const {
  std::string out = "structure";
  for (size_t i = 0; i < switches_.size(); ++i)
    if (switches_[i].hashed_at_default || s.get(i) != switches_[i].default_value)
      out += " " + switches_[i].hash_name + " " + value_text(s, i);
  return out;
}

Structure StructureTable::effective(const Structure& s, const GraphFacts& g) const {
  Structure e = s;
  for (size_t i = 0; i < switches_.size(); ++i)
    if (switches_[i].effective) e.set(i, switches_[i].effective(s, s.get(i), g));
  return e;
}

Structure StructureTable::parse(MapReader& m, Structure s) const {
  for (size_t i = 0; i < switches_.size(); ++i) {
    const StructureSwitch& w = switches_[i];
    if (w.choices.empty() && w.integer) {
      if (auto v = m.integer(w.key, false, static_cast<int64_t>(w.min), static_cast<int64_t>(w.max)))
        s.set(i, static_cast<double>(*v));
    } else if (w.choices.empty()) {
      if (auto v = m.number(w.key, false, w.min, w.max)) s.set(i, *v);
    } else if (auto v = m.string(w.key, false)) {
      const auto it = std::find(w.choices.begin(), w.choices.end(), *v);
      if (it == w.choices.end()) m.error(w.key, "expected " + or_list(w.choices) + ", got '" + *v + "'");
      else s.set(i, static_cast<double>(it - w.choices.begin()));
    }
  }
  return s;
}

std::string to_text(const Structure& s) { return StructureTable::shipped().text(s); }

}  // namespace layoutx::costmodel
