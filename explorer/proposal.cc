#include "explorer/proposal.h"

#include <cstdio>

#include "explorer/open_decisions.h"
#include "model/design_space.h"
#include "support/error.h"

namespace layoutx::explorer {

ModelLayout team_default(const model::ModelSpec& m, model::Precision p, const ProposalOptions& o) {
  ModelLayout l;
  // Ring at the model's own defaults (its GELU form) and the table's exporter forms (f16 cache).
  const auto& d = model::design_space();
  const model::Variant ring = d.preset("ring", d.defaults_for(model::AxisScope(m), model::Variant{}.set(p)));
  for (model::LayerType t : {model::LayerType::kSliding, model::LayerType::kFull})
    if (m.count(t) > 0) l.layers[t] = ring;
  l.layers_per_part = 1;
  l.head_precision = o.head_precision;
  l.kv_update = KvUpdate::kInPlace;
  l.scope = o.scope;
  return l;
}

std::vector<Decision> proposal_decisions(const Proposal& p, const model::ModelSpec& m) {
  std::vector<Decision> out;
  for (const Choice& c : p.choices) out.push_back({p.ctx, m.count(c.layer), m.layer(c.layer, p.ctx), c});
  return out;
}

namespace {

std::string parts_text(const ModelLayout& l, const ModelStep& s) {
  const int per = l.layers_per_part;
  std::string t = std::to_string(s.parts.size()) + (s.parts.size() == 1 ? " binary (" : " binaries (") +
                  (per <= 0 ? std::string("all layers") : std::to_string(per) + (per == 1 ? " layer" : " layers")) + " a part";
  t += l.embed_in_first ? ", embed in the first" : ", embed apart";
  t += l.head_in_last ? ", head in the last)" : ", head apart)";
  return t;
}

// The fastest partition of `base`'s layer layouts within the limits; counts what it priced.
struct Best {
  ModelLayout layout;
  ModelStep step;
  bool found = false;
};
Best best_partition(const MemberCosts& members, const std::string& device, const model::ModelSpec& m,
                    const ModelLayout& base, const ProposalOptions& o, const costmodel::RuntimeSpec& rt, Proposal& out) {
  Best best;
  std::vector<int> counts;
  if (o.layers_per_part) counts = {*o.layers_per_part};
  else
    for (int n = 1; n <= m.num_layers(); ++n) counts.push_back(n);
  const std::vector<bool> embeds = o.embed_in_first ? std::vector<bool>{*o.embed_in_first} : std::vector<bool>{false, true};
  const std::vector<bool> heads = o.head_in_last ? std::vector<bool>{*o.head_in_last} : std::vector<bool>{false, true};
  const bool fixed = o.layers_per_part && o.embed_in_first && o.head_in_last;
  for (int n : counts)
    for (bool embed_in : embeds)
      for (bool head_in : heads) {
        ModelLayout l = base;
        l.layers_per_part = n;
        l.embed_in_first = embed_in;
        l.head_in_last = head_in;
        ++out.partitions_priced;
        try {
          ModelStep s = price_partition(members, m, l, rt, device);
          // Ties within a microsecond keep the earlier (fewer layers a part, parts apart).
          if (!best.found || s.ms < best.step.ms - 1e-3) best = {l, std::move(s), true};
        } catch (const Error& e) {
          ++out.partitions_refused;
          if (out.refused_example.empty()) out.refused_example = e.what();
          if (fixed) throw;  // the question's own partition: its refusal is the answer
        }
      }
  if (!best.found) throw Error("no partition of " + m.name + " stays within " + device + "'s limits: " + out.refused_example);
  return best;
}

}  // namespace

Proposal propose(Evaluator& ev, const model::ModelSpec& m, int ctx, model::Precision p, const ProposalOptions& o,
                 const costmodel::RuntimeSpec& rt) {
  Proposal out;
  out.ctx = ctx;
  // 1. The layer layouts: select's choice per layer type (and the known-good one when untested
  // forms may win).
  ModelLayout chosen = team_default(m, p, o), known = chosen;
  for (model::LayerType t : {model::LayerType::kSliding, model::LayerType::kFull}) {
    if (m.count(t) == 0) continue;
    if (auto f = o.fixed_layers.find(t); f != o.fixed_layers.end()) {  // the question's own: not searched
      chosen.layers[t] = known.layers[t] = f->second;
      const model::AxisScope scope(m);
      out.fixed.push_back(std::string(model::to_string(t)) + " layout fixed by the question: " +
                          model::design_space().display_name(f->second, &scope) + " (compiles: " +
                          costmodel::to_string(ev.evaluate(m.layer(t, ctx), f->second).prediction.legality.compiles) +
                          "; its fidelity not checked)");
      continue;
    }
    const model::LayerSpec L = m.layer(t, ctx);
    SelectionPolicy policy = o.policy;
    policy.incumbent = chosen.layers[t];  // a change from what the team ships must earn its place
    out.choices.push_back(select_layer(ev, L, p, policy));
    chosen.layers[t] = out.choices.back().chosen.eval.variant;
    known.layers[t] = chosen.layers[t];
    if (out.choices.back().chose_untested) {
      SelectionPolicy strict = policy;
      strict.allow_untested = false;
      known.layers[t] = select_layer(ev, L, p, strict).chosen.eval.variant;
      out.known_good_differs = true;
    }
  }
  chosen.kv_update = known.kv_update = o.kv_update;
  // 2. The partition of each, and the baseline as the team ships it.
  const std::string device = ev.predictor().device();
  const MemberCosts members = price_members(ev, m, ctx, chosen);
  Best b = best_partition(members, device, m, chosen, o, rt, out);
  out.layout = b.layout;
  out.step = std::move(b.step);
  if (out.known_good_differs) {
    Best k = best_partition(price_members(ev, m, ctx, known), device, m, known, o, rt, out);
    out.known_good_layout = k.layout;
    out.known_good = std::move(k.step);
  } else {
    out.known_good_layout = out.layout;
    out.known_good = out.step;
  }
  // The partition's robustness: the search again with the runtime priors at each end.
  out.partition = parts_text(out.layout, out.step);
  for (costmodel::RuntimeEnd end : {costmodel::RuntimeEnd::kFast, costmodel::RuntimeEnd::kSlow}) {
    Proposal scratch;
    const Best e = best_partition(members, device, m, chosen, o, costmodel::at_end(rt, end), scratch);
    (end == costmodel::RuntimeEnd::kSlow ? out.partition_at_high : out.partition_at_low) = parts_text(e.layout, e.step);
  }
  for (model::Precision h : {model::Precision::kFp16, model::Precision::kW8A16, model::Precision::kW4A16}) {
    if (h == out.layout.head_precision) continue;
    ModelLayout other = out.layout;
    other.head_precision = h;
    try {
      out.head_alternatives.push_back({h, price_model(ev, m, ctx, other, rt).ms - out.step.ms});
    } catch (const Error&) {
      // A head at this precision that breaks a limit in this partition is no alternative here.
    }
  }
  out.baseline_layout = team_default(m, p, o);
  out.baseline = price_model(ev, m, ctx, out.baseline_layout, rt);
  // 3. The gain, one axis at a time from the baseline: each layer type's layout, the host's KV
  // update (when the question changes it), then the parts.
  const model::AxisScope scope(m);
  ModelLayout at = out.baseline_layout;
  double before = out.baseline.ms;
  for (model::LayerType t : {model::LayerType::kSliding, model::LayerType::kFull}) {
    if (m.count(t) == 0 || at.layers[t] == out.layout.layers[t]) continue;
    const std::string from = model::design_space().display_name(at.layers[t], &scope);
    at.layers[t] = out.layout.layers[t];
    const double now = price_model(ev, m, ctx, at, rt).ms;
    out.gains.push_back({std::string(model::to_string(t)) + " layout", from,
                         model::design_space().display_name(at.layers[t], &scope), now - before});
    before = now;
  }
  if (at.kv_update != out.layout.kv_update) {
    const std::string from = to_string(at.kv_update);
    at.kv_update = out.layout.kv_update;
    const double now = price_model(ev, m, ctx, at, rt).ms;
    out.gains.push_back({"kv update", from, to_string(at.kv_update), now - before});
    before = now;
  }
  if (at.layers_per_part != out.layout.layers_per_part || at.embed_in_first != out.layout.embed_in_first ||
      at.head_in_last != out.layout.head_in_last) {
    out.gains.push_back({"parts", parts_text(at, out.baseline), parts_text(out.layout, out.step), out.step.ms - before});
  }
  return out;
}

std::optional<MeasuredLayers> measured_layers(Evaluator& ev, const model::ModelSpec& m, int ctx, const Assignment& layers,
                                              const std::vector<costmodel::MeasurementRecord>& records) {
  MeasuredLayers out;
  for (const auto& [type, v] : layers) {
    const model::LayerSpec L = m.layer(type, ctx);
    const std::string key = graph_key(L, v);
    double sum = 0;
    int n = 0;
    for (const auto& r : records)
      if (auto k = timed_graph_key(r, m); k && *k == key) {
        sum += r.ms;
        ++n;
      }
    const Evaluation& e = ev.evaluate(L, v);
    if (n == 0 || e.status != EvalStatus::kOk) return std::nullopt;
    const int count = m.count(type);
    char term[96];
    std::snprintf(term, sizeof term, "%d x %.3f ms %s", count, sum / n, model::to_string(type));
    out.terms.push_back(term);
    out.measured_ms += count * sum / n;
    out.predicted_ms += count * e.prediction.latency_ms;
  }
  return out;
}

}  // namespace layoutx::explorer
