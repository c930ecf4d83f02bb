#include "explorer/public_shapes.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "explorer/evaluator.h"
#include "explorer/member_predictor.h"
#include "explorer/model_layout.h"
#include "explorer/public_layouts.h"
#include "support/error.h"

namespace layoutx::explorer {

namespace {

using costmodel::PublicRecord;

// The record's part priced by `ev`: the part it names in the partition its question makes, which
// must hold the layers it names; `plain`: it holds decoder layers alone. Throws Error saying why not.
double part_ms(Evaluator& ev, const PublicQuestion& q, const PublicRecord& r, const costmodel::RuntimeSpec& runtime,
               bool& plain) {
  const ModelStep s = price_model(ev, q.model, q.ctx, q.layout, runtime);
  const int part = *record_part(r.layout.this_record);
  if (part > static_cast<int>(s.parts.size()))
    throw Error("part " + std::to_string(part) + " of " + std::to_string(s.parts.size()) + " priced");
  const PartCost& p = s.parts[static_cast<size_t>(part - 1)];
  if (const auto layers = record_layers(r.layout.this_record)) {
    if (p.layers.empty() || p.layers.front() != layers->first || p.layers.back() != layers->second)
      throw Error("part " + std::to_string(part) + " priced as " + p.name + ", not layers " +
                  std::to_string(layers->first) + "-" + std::to_string(layers->second));
  } else if (!p.layers.empty()) {
    throw Error("part " + std::to_string(part) + " priced as " + p.name + ", which holds layers the record does not name");
  }
  plain = !p.layers.empty() && !p.embed && !p.head;
  return p.ms;
}

// The weighted q-quantile of `x` (weights `w`, summing to 1).
double weighted_quantile(std::vector<double> x, std::vector<double> w, double q) {
  std::vector<size_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
  double cum = 0;
  for (size_t i : order)
    if ((cum += w[i]) >= q) return x[i];
  return x[order.back()];
}

}  // namespace

PricedParts price_public_parts(MixtureMembers& members, const costmodel::PublicTimings& t,
                               const costmodel::RuntimeSpec& runtime, const std::string& chip) {
  std::vector<std::unique_ptr<Evaluator>> evaluators;
  for (size_t i = 0; i < members.size(); ++i) evaluators.push_back(std::make_unique<Evaluator>(members[i]));
  PricedParts out;
  std::map<std::string, size_t> set_of;  // id|model|chip -> its set
  for (const auto& r : t.records) {
    if (r.kind != costmodel::PublicKind::kGraphTime || !record_part(r.layout.this_record)) continue;
    const std::string key = r.id + "|" + r.model + "|" + r.chip;
    auto [it, fresh] = set_of.emplace(key, out.sets.size());
    if (fresh) {
      PricedPartSet set;
      set.id = r.id, set.model = r.model, set.chip = r.chip;
      out.sets.push_back(std::move(set));
    }
    PricedPartSet& set = out.sets[it->second];
    std::string why_not;
    const auto q = public_question(r, t, chip, why_not, true);
    if (!q) {
      set.not_priced.push_back({&r, why_not});
      continue;
    }
    try {
      PricedPart part;
      part.record = &r;
      bool plain = false;
      for (auto& ev : evaluators) part.member_ms.push_back(part_ms(*ev, *q, r, runtime, plain));
      part.plain = plain;
      set.parts.push_back(std::move(part));
      if (!set.reference && record_layers(r.layout.this_record)) set.reference = &r, set.approximations = q->approximations;
    } catch (const Error& e) {
      set.not_priced.push_back({&r, std::string("not priced: ") + e.what()});
    }
  }
  std::erase_if(out.sets, [](const PricedPartSet& s) { return s.reference == nullptr; });
  for (size_t i = 0; i < members.size(); ++i) out.weights.push_back(members.weight(i));
  // Nothing priced: no weight is known, and no set holds a part to weigh (equal weights).
  const double total = std::accumulate(out.weights.begin(), out.weights.end(), 0.0);
  for (double& w : out.weights) w = total > 0 ? w / total : 1.0 / static_cast<double>(out.weights.size());
  return out;
}

std::vector<ShapeSet> public_shape_ratios(const costmodel::Predictor& mixture, const costmodel::PublicTimings& t,
                                          const costmodel::RuntimeSpec& runtime, const std::string& chip) {
  MixtureMembers members(mixture);
  const PricedParts priced = price_public_parts(members, t, runtime, chip);
  const std::vector<double>& weight = priced.weights;
  const size_t n = weight.size();
  auto mean = [&](const std::vector<double>& x) { return std::inner_product(x.begin(), x.end(), weight.begin(), 0.0); };
  std::vector<ShapeSet> out;
  for (const PricedPartSet& p : priced.sets) {
    ShapeSet set;
    set.id = p.id, set.model = p.model, set.chip = p.chip, set.reference = p.reference;
    set.approximations = p.approximations;
    set.not_priced = p.not_priced;
    const std::vector<double>& ref =
        std::find_if(p.parts.begin(), p.parts.end(), [&](const PricedPart& x) { return x.record == p.reference; })->member_ms;
    set.reference_device_ms = mean(ref);
    for (const PricedPart& part : p.parts) {
      if (part.record == p.reference) continue;
      ShapeRatio s;
      s.record = part.record;
      s.published = *part.record->ms_per_graph / *p.reference->ms_per_graph;
      std::vector<double> ratio(n);
      for (size_t i = 0; i < n; ++i) ratio[i] = part.member_ms[i] / ref[i];
      s.predicted = mean(ratio);
      s.low = weighted_quantile(ratio, weight, 0.05);
      s.high = weighted_quantile(ratio, weight, 0.95);
      s.device_ms = mean(part.member_ms);
      set.ratios.push_back(s);
    }
    if (!set.ratios.empty()) out.push_back(std::move(set));
  }
  return out;
}

}  // namespace layoutx::explorer
