#include "costmodel/featurization_cache.h"

#include <algorithm>
#include <optional>
#include <utility>

namespace layoutx::costmodel {

namespace {

// What a member's VTCM knee makes of a featurization, as its design row sees it: the spill bytes
// if it prices them, else only whether the live set is over the knee (the stall's switch).
std::pair<bool, double> knee_effect(const LayerFeatures& f, const DeviceSpec& d) {
  const double spill = spill_bytes(f, d.structure.vtcm_budget_mb());
  const bool per_byte = d.graph_index(Term::kSpill, f.precision) >= 0;
  return {per_byte, per_byte ? spill : (spill > 0 ? 1.0 : 0.0)};
}

// The distinct effective structures of the members, in first-seen order.
struct DistinctStructures {
  std::vector<Structure> effective;     // member h's effective structure for the graph
  std::vector<Structure> structures;    // the distinct ones
  std::vector<size_t> first_member;     // structures[i]'s first member
  std::vector<size_t> structure_of;     // member h -> its index in structures
  std::optional<model::LayerGraph> twin;  // the grouped twin, when a member prices the graph as it
};

DistinctStructures distinct_structures(const model::LayerGraph& graph, const std::vector<const DeviceSpec*>& members) {
  DistinctStructures s;
  // The question GraphFacts may ask, with what it reads: one object, so that the std::function
  // holds a single pointer (no allocation per member). A member that prices a per-head graph as
  // its grouped twin (priced_as_grouped) is asked of the twin, which it featurizes: the per-head
  // graph never reads a cache input in place (each head slices it), the twin may.
  struct ReadsInPlace {
    const model::LayerGraph* graph;
    const DeviceSpec* member = nullptr;                // the member being asked for
    std::optional<std::pair<double, bool>> last;       // (live_min_kb, answer) of `graph`, asked once
  } ask{&graph, nullptr, std::nullopt};
  // The structure as it matters for this graph (StructureTable::effective): switches that
  // change nothing in it are cleared, so hypotheses that differ only there share one
  // featurization; the VTCM knee is applied per member (knee_effect).
  GraphFacts facts{graph.variant.precision(), graph.variant.softmax(), [q = &ask](double live_min_kb) {
                     if (!q->last || q->last->first != live_min_kb)
                       q->last.emplace(live_min_kb,
                                       !cache_inputs_read_in_place(*q->graph, q->member->channel_pad, live_min_kb).empty());
                     return q->last->second;
                   }};
  facts.block_weights = model::block_rows(graph.variant.weight_quant()) > 0;
  facts.per_head = graph.variant.heads() == model::HeadsForm::kPerHead;
  facts.conv_projections = graph.variant.projection() == model::ProjectionForm::kConv1x1;
  s.effective.reserve(members.size());
  for (const DeviceSpec* d : members) {
    ask.member = d;
    const bool as_grouped = facts.per_head && priced_as_grouped(graph, d->structure);
    if (as_grouped && !s.twin) s.twin = grouped_twin(graph);
    const model::LayerGraph* asked = as_grouped ? &*s.twin : &graph;
    if (ask.graph != asked) ask.graph = asked, ask.last.reset();
    s.effective.push_back(StructureTable::shipped().effective(d->structure, facts));
  }
  s.structure_of.resize(members.size());
  for (size_t h = 0; h < members.size(); ++h) {
    const Structure& e = s.effective[h];
    s.structure_of[h] = static_cast<size_t>(std::find(s.structures.begin(), s.structures.end(), e) - s.structures.begin());
    if (s.structure_of[h] == s.structures.size()) {
      s.structures.push_back(e);
      s.first_member.push_back(h);
    }
  }
  return s;
}

// Whether two structures featurize a graph's ops alike (featurize_ops): they agree on every
// switch but those featurize_ops does not read (layer_features.h: the re-laid cache inputs, the
// VTCM budget and the cache-sized threshold, read only by finish_layer_features).
bool same_ops(Structure a, Structure b) {
  for (Switch s : {Switch::kRelayoutCacheInputs, Switch::kVtcmBudgetMb, Switch::kLiveMinKb}) {
    a.set(s, 0);
    b.set(s, 0);
  }
  return a == b;
}

}  // namespace

const std::vector<LoweredOp>* MemberFeatures::unfused_ops() const {
  const std::vector<LoweredOp>* unfused = nullptr;
  for (size_t k = 0; k < features.size(); ++k)
    if (as_written[k]) unfused = &features[k].ops;
  return unfused;
}

MemberFeatures FeaturizationCache::featurize(const model::LayerGraph& graph,
                                             const std::vector<const DeviceSpec*>& members) const {
  if (enabled_) return shared(graph, members);
  MemberFeatures m;
  for (const DeviceSpec* d : members) {
    m.of_member.push_back(m.features.size());
    m.features.push_back(featurize_layer(graph, *d));
    m.as_written.push_back(!d->structure.fuse_explicit_softmax());
  }
  return m;
}

MemberFeatures FeaturizationCache::shared(const model::LayerGraph& graph,
                                          const std::vector<const DeviceSpec*>& members) const {
  DistinctStructures s = distinct_structures(graph, members);
  std::vector<Structure>& structures = s.structures;
  MemberFeatures m;
  std::vector<std::pair<bool, double>> knees;  // m.features[k]'s knee_effect
  // One featurization per distinct effective structure, with the knee of the first member that
  // has it. Structures that differ only in what featurize_ops does not read (same_ops) share one
  // op featurization, and every structure one lowering of the graph; each finishes its own copy (re-laid copies, live set), the
  // last of them taking it by move.
  const size_t distinct = structures.size();
  m.features.reserve(members.size());
  knees.reserve(members.size());
  std::vector<std::optional<LayerFeatures>> ops(distinct);  // at the first structure of its kind
  std::optional<model::LayerGraph>& twin = s.twin;  // the grouped twin, for structures that price a per-head graph as it
  // Each graph's lowering (the graph, its twin), done once: structures differ only in what they
  // make of it (featurize_ops folds the softmax or not); likewise its live-set peaks.
  std::optional<std::vector<LoweredOp>> lowered[2];
  LivePeakMemo peaks;
  // Each structure's kind (the first structure that featurizes its ops alike) and which graph
  // it featurizes (the graph or its grouped twin): the last kind to featurize a graph takes
  // that graph's lowering by move.
  std::vector<size_t> kind(distinct);
  std::vector<bool> grouped(distinct);
  size_t last_kind[2] = {distinct, distinct};
  for (size_t i = 0; i < distinct; ++i) {
    kind[i] = 0;
    while (!same_ops(structures[kind[i]], structures[i])) ++kind[i];
    grouped[i] = priced_as_grouped(graph, structures[i]);
    if (kind[i] == i) last_kind[grouped[i] ? 1 : 0] = i;
  }
  for (size_t i = 0; i < distinct; ++i) {
    const DeviceSpec& d = *members[s.first_member[i]];
    const bool as_grouped = grouped[i];
    if (as_grouped && !twin) twin = grouped_twin(graph);
    const model::LayerGraph& g = as_grouped ? *twin : graph;
    const size_t j = kind[i];
    if (!ops[j]) {
      std::optional<std::vector<LoweredOp>>& l = lowered[as_grouped ? 1 : 0];
      if (!l) l = lower(g);
      ops[j] = last_kind[as_grouped ? 1 : 0] == j ? featurize_ops(g, d, std::move(*l)) : featurize_ops(g, d, *l);
    }
    bool last = true;
    for (size_t k = i + 1; k < distinct && last; ++k) last = kind[k] != j;
    LayerFeatures f = last ? std::move(*ops[j]) : *ops[j];
    finish_layer_features(f, g, d, &peaks);  // with d's own knee applied
    knees.push_back(knee_effect(f, d));
    m.features.push_back(std::move(f));
  }
  // Each member: its structure's featurization; a copy with the member's knee applied where the
  // knee changes what its row sees.
  m.of_member.resize(members.size());
  for (size_t h = 0; h < members.size(); ++h) {
    const DeviceSpec& d = *members[h];
    const Structure& e = s.effective[h];
    const size_t b = s.structure_of[h];
    const std::pair<bool, double> knee = knee_effect(m.features[b], d);
    size_t k = b;
    while (k < structures.size() && !(structures[k] == e && knees[k] == knee)) ++k;
    if (k == structures.size()) {
      structures.push_back(e);
      m.features.push_back(m.features[b]);
      apply_vtcm_budget(m.features.back(), d.structure.vtcm_budget_mb());
      knees.push_back(knee);
    }
    m.of_member[h] = k;
  }
  for (const Structure& e : structures) m.as_written.push_back(!e.fuse_explicit_softmax());
  return m;
}

}  // namespace layoutx::costmodel
