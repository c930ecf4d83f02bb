#include "explorer/model_layout.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <limits>
#include <map>

#include "explorer/whole_step.h"
#include "model/analysis.h"
#include "model/builder.h"
#include "model/design_space.h"
#include "support/error.h"

namespace layoutx::explorer {

std::vector<std::vector<int>> layer_groups(const model::ModelSpec& m, int layers_per_part) {
  const int n = m.num_layers(), per = layers_per_part <= 0 ? n : std::min(layers_per_part, n);
  std::vector<std::vector<int>> groups;
  for (int i = 0; i < n; ++i) {
    if (i % per == 0) groups.emplace_back();
    groups.back().push_back(i);
  }
  return groups;
}

namespace {

MemberCost member(const costmodel::Prediction& p, const model::LayerGraph& g) {
  const model::GraphTotals t = model::totals(g, model::analyze(g));
  return {p.latency_ms, p.low_ms, p.high_ms, p.floor_ms, static_cast<double>(t.weight_bytes),
          static_cast<double>(t.boundary_bytes_in + t.boundary_bytes_out), p.design_row};
}

int kv_bytes(model::KvDtype d) { return d == model::KvDtype::kU8 ? 1 : 2; }

std::string gb(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f GB", bytes / 1e9);
  return b;
}

// The host's KV bytes per token for one layer (written, shifted or copied back).
double kv_update_bytes(const model::LayerSpec& built, const model::Variant& v, KvUpdate u) {
  const double entry = 2.0 * built.kv_heads * built.head_dim * kv_bytes(v.kv_dtype());  // K and V
  if (v.returns() == model::KvReturn::kWindow) return entry * built.cache_entries;      // the window handed back
  const bool shifts = u == KvUpdate::kShift && built.type == model::LayerType::kSliding &&
                      built.cache_entries == built.window - 1;
  return shifts ? entry * (built.cache_entries + 1) : entry;  // memmove the window, then write
}

}  // namespace

MemberCosts price_members(Evaluator& ev, const model::ModelSpec& m, int ctx, const ModelLayout& layout) {
  MemberCosts c;
  c.ctx = ctx;
  const costmodel::Predictor& pr = ev.predictor();
  // Each layer type's graph, the embedding gather's and the head's.
  model::Precision layers_precision = layout.head_precision;
  for (model::LayerType t : {model::LayerType::kSliding, model::LayerType::kFull}) {
    if (m.count(t) == 0) continue;
    auto it = layout.layers.find(t);
    if (it == layout.layers.end()) throw Error(std::string("the model layout has no variant for the ") + model::to_string(t) + " layers");
    const model::LayerSpec L = m.layer(t, ctx);
    // A form the cost model does not price yet is priced as its axis's default, and said.
    std::vector<std::string> unpriced;
    const model::Variant v = model::design_space().priced_representative(it->second, unpriced);
    for (const auto& n : unpriced) c.notes.push_back(std::string(model::to_string(t)) + " layers: " + n);
    const Evaluation& e = ev.evaluate(L, v);
    if (e.status != EvalStatus::kOk) throw Error(std::string(model::to_string(t)) + " " + v.key() + ": " + e.error);
    const model::LayerGraph g = model::build_layer_graph(L, v);
    c.layer[t] = member(e.prediction, g);
    c.built[t] = g.layer;
    layers_precision = it->second.precision();
  }
  model::LayerGraph embed, head;
  build_embed_graph(m, layers_precision, embed);
  build_head_graph(m, layout.head_precision, head);
  const costmodel::Prediction pe = pr.predict(embed), ph = pr.predict(head);
  c.embed = member(pe, embed);
  c.head = member(ph, head);
  c.embed.weight_bytes = 2.0 * m.vocab * m.hidden;  // the table the gather reads (f16), held by its part
  // The device's cost of one execute: the graph-level term of the embedding gather, a graph with
  // nothing else at the graph level (no spill, no stall). Merging k graphs into one saves k - 1.
  for (const auto& op : pe.ops)
    if (std::string(op.op_class) == "graph") c.execute_ms += op.ms;
  return c;
}

ModelStep price_partition(const MemberCosts& c, const model::ModelSpec& m, const ModelLayout& layout,
                          const costmodel::RuntimeSpec& rt, const std::string& device) {
  ModelStep s;
  s.ctx = c.ctx;
  s.execute_ms = c.execute_ms;
  s.notes = c.notes;
  if (s.execute_ms == 0)
    s.notes.push_back("the cost model has no per-execute term: merging graphs into parts saves nothing it can price");

  // 1. The parts.
  const auto groups = layer_groups(m, layout.layers_per_part);
  auto add = [](PartCost& p, const MemberCost& x) {
    p.ms += x.ms, p.low_ms += x.low_ms, p.high_ms += x.high_ms, p.floor_ms += x.floor_ms;
    p.weight_bytes += x.weight_bytes, p.io_bytes += x.io_bytes, ++p.graphs_merged;
  };
  if (!layout.embed_in_first) {
    PartCost p;
    p.name = "embed", p.embed = true;
    add(p, c.embed);
    s.parts.push_back(p);
  }
  for (size_t k = 0; k < groups.size(); ++k) {
    PartCost p;
    p.layers = groups[k];
    p.name = "layers " + std::to_string(groups[k].front()) +
             (groups[k].size() > 1 ? "-" + std::to_string(groups[k].back()) : std::string());
    if (k == 0 && layout.embed_in_first) add(p, c.embed), p.embed = true, p.name = "embed + " + p.name;
    for (int i : groups[k]) add(p, c.layer.at(m.layer_types[static_cast<size_t>(i)]));
    if (k + 1 == groups.size() && layout.head_in_last) add(p, c.head), p.head = true, p.name += " + head";
    s.parts.push_back(p);
  }
  if (!layout.head_in_last) {
    PartCost p;
    p.name = "head", p.head = true;
    add(p, c.head);
    s.parts.push_back(p);
  }
  // Each joined boundary saves the execute term, and what else joining saves (a prior: its value
  // in the point, its ends in the bounds).
  const costmodel::RuntimeTerm& extra = rt.merge_saving_us;
  for (PartCost& p : s.parts) {
    const int joined = p.graphs_merged - 1;
    p.ms -= joined * (s.execute_ms + extra.value / 1e3);
    p.high_ms -= joined * (s.execute_ms + extra.low / 1e3);
    // The fast end stops at the part's floor (its bytes across DRAM at peak: no part takes less),
    // however far its members' intervals reach (a mixture far from any timing reaches 0).
    p.low_ms = std::max(p.floor_ms, p.low_ms - joined * (s.execute_ms + extra.high / 1e3));
    p.pays_wakeup = rt.present && p.ms * 1e3 > rt.rpc_polling_us;
    s.graphs_ms += p.ms, s.graphs_low_ms += p.low_ms, s.graphs_high_ms += p.high_ms, s.floor_ms += p.floor_ms;
  }

  // 2. The limits.
  if (rt.present) {
    if (rt.max_binaries > 0 && static_cast<int>(s.parts.size()) > rt.max_binaries)
      throw Error(std::to_string(s.parts.size()) + " context binaries: over the " + std::to_string(rt.max_binaries) +
                  " one process loads (" + device + " runtime.max_binaries); put more layers in a part");
    for (const PartCost& p : s.parts) {
      if (rt.max_binary_gb > 0 && p.weight_bytes > rt.max_binary_gb * 1e9)
        throw Error("part '" + p.name + "' holds " + gb(p.weight_bytes) + " of weights: over the " + gb(rt.max_binary_gb * 1e9) +
                    " a context binary file holds (" + device + " runtime.max_binary_gb); put fewer layers in a part");
      if (rt.max_context_gb > 0 && p.weight_bytes + p.io_bytes > rt.max_context_gb * 1e9)
        throw Error("part '" + p.name + "' needs " + gb(p.weight_bytes + p.io_bytes) + " (weights and I/O tensors): over the " +
                    gb(rt.max_context_gb * 1e9) + " of one context (" + device + " runtime.max_context_gb)");
    }
  }

  // 3. The host's terms (the runner's scope): at the priors' values, and the bounds at their ends.
  if (layout.scope == StepScope::kRunner && rt.present) {
    const double calls = static_cast<double>(s.parts.size());
    double kv = 0;
    for (int i = 0; i < m.num_layers(); ++i) {
      const model::LayerType t = m.layer_types[static_cast<size_t>(i)];
      kv += kv_update_bytes(c.built.at(t), layout.layers.at(t), layout.kv_update);
    }
    int wakeups = 0;
    for (const PartCost& p : s.parts) wakeups += p.pays_wakeup;
    // ms of (calls, KV update, sampling, wake-ups) under the priors' values in `r`.
    auto host = [&](const costmodel::RuntimeSpec& r) {
      return std::array<double, 4>{calls * r.host_call_us.value / 1e3, kv / (r.host_copy_gbps.value * 1e6),
                                   m.vocab * r.sampling_ns_per_vocab.value / 1e6, wakeups * r.wakeup_us.value / 1e3};
    };
    auto sum = [](const std::array<double, 4>& x) { return x[0] + x[1] + x[2] + x[3]; };
    const auto at = host(rt);
    s.host_calls_ms = at[0], s.kv_update_ms = at[1], s.sampling_ms = at[2], s.wakeup_ms = at[3];
    s.host_ms = sum(at);
    s.host_low_ms = sum(host(costmodel::at_end(rt, costmodel::RuntimeEnd::kFast)));
    s.host_high_ms = sum(host(costmodel::at_end(rt, costmodel::RuntimeEnd::kSlow)));
  } else if (layout.scope == StepScope::kRunner) {
    s.notes.push_back("the device file has no runtime: block: graph execution only (no host terms, no limits)");
  }
  s.ms = s.graphs_ms + s.host_ms;
  s.low_ms = s.graphs_low_ms + s.host_low_ms;
  s.high_ms = s.graphs_high_ms + s.host_high_ms;
  s.tokens_per_s = s.ms > 0 ? 1e3 / s.ms : 0;
  s.tokens_low = s.high_ms > 0 ? 1e3 / s.high_ms : 0;
  s.tokens_high = s.low_ms > 0 ? 1e3 / s.low_ms : std::numeric_limits<double>::infinity();  // unbounded
  s.efficiency = s.ms > 0 ? s.floor_ms / s.ms : 0;
  return s;
}

ModelStep price_model(Evaluator& ev, const model::ModelSpec& m, int ctx, const ModelLayout& layout,
                      const costmodel::RuntimeSpec& runtime) {
  return price_partition(price_members(ev, m, ctx, layout), m, layout, runtime, ev.predictor().device());
}

WholeModelRecord model_record(const ModelLayout& l, const ModelStep& s) {
  WholeModelRecord w;
  static_cast<ModelAxes&>(w) = l;
  w.ms_per_token = s.ms;
  w.tokens_per_s = s.tokens_per_s;
  for (const PartCost& p : s.parts) w.parts.push_back({p.name, p.layers, p.embed, p.head, p.weight_bytes, p.ms});
  return w;
}

ModelLayout model_layout_of(const LayoutFile& f, const model::ModelSpec& m, const std::string& path) {
  if (!f.whole_model)
    throw Error(path + ": no model_layout block (a per-type layout file, as select writes; propose --out writes a whole-model one)");
  if (f.model != m.name) throw Error(path + ": model: the file is for '" + f.model + "', not '" + m.name + "'");
  if (static_cast<int>(f.layers.size()) != m.num_layers())
    throw Error(path + ": layers: " + std::to_string(f.layers.size()) + " entries, but " + m.name + " has " +
                std::to_string(m.num_layers()) + " layers");
  const WholeModelRecord& w = *f.whole_model;
  ModelLayout l;
  for (const auto& [t, e] : f.defaults) l.layers[t] = e.variant;
  for (size_t i = 0; i < f.layers.size(); ++i)
    if (f.layers[i].type != m.layer_types[i] || !(f.layers[i].variant == l.layers[f.layers[i].type]))
      throw Error(path + ": layers[" + std::to_string(i) + "]: not its type's default (" + m.name + "'s layer " +
                  std::to_string(i) + " is " + model::to_string(m.layer_types[i]) + "); a whole-model layout has one layout a type");
  static_cast<ModelAxes&>(l) = w;
  // The parts written must be the partition the axes make (an exporter builds what it reads).
  std::vector<std::vector<int>> written;
  for (const auto& p : w.parts)
    if (!p.layers.empty()) written.push_back(p.layers);
  if (written != layer_groups(m, w.layers_per_part))
    throw Error(path + ": model_layout.parts: not the " + std::to_string(w.layers_per_part) +
                " layers a part that layers_per_part says");
  return l;
}

std::vector<double> whole_model_row(const MemberCosts& c, const model::ModelSpec& m) {
  std::vector<double> row;
  auto add = [&](const std::vector<double>& r, double times) {
    if (row.empty()) row.assign(r.size(), 0.0);
    if (r.size() != row.size()) throw Error("the design rows of " + m.name + "'s graphs differ in size");
    for (size_t i = 0; i < r.size(); ++i) row[i] += times * r[i];
  };
  for (const auto& [t, member] : c.layer) add(member.design_row, m.count(t));
  add(c.embed.design_row, 1);
  add(c.head.design_row, 1);
  return row;
}

}  // namespace layoutx::explorer
