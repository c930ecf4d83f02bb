#include "explorer/public_joint.h"

#include <cmath>
#include <map>
#include <sstream>

#include "explorer/public_layouts.h"
#include "explorer/public_shapes.h"
#include "support/disk_memo.h"
#include "support/error.h"
#include "support/hash.h"
#include "support/median.h"
#include "support/paths.h"

namespace layoutx::explorer {

using costmodel::JointFit;
using costmodel::JointObservation;
using costmodel::JointTerm;
using costmodel::PublicKind;

namespace {

// The records every member priced, as observations of the joint fit, and the terms they name.
struct Problem {
  std::vector<JointTerm> terms;
  std::vector<JointObservation> obs;
  std::vector<const costmodel::PublicRecord*> records;  // each observation's (into the timings, not the checks)
  std::vector<bool> part;  // each observation's: a plain part's time of a per-graph set (a level of its own)
  std::vector<std::string> term_kind, term_key;
};

int term_index(Problem& p, const std::string& kind, const std::string& key, double prior, double log_sd) {
  for (size_t k = 0; k < p.terms.size(); ++k)
    if (p.term_kind[k] == kind && p.term_key[k] == key) return static_cast<int>(k);
  p.terms.push_back({kind + " " + key, prior, log_sd});
  p.term_kind.push_back(kind);
  p.term_key.push_back(key);
  return static_cast<int>(p.terms.size() - 1);
}

Problem build_problem(const std::vector<MemberChecks>& members, const std::string& chip, const JointPriors& priors) {
  Problem p;
  const auto& first = members.front().checks;
  for (size_t i = 0; i < first.size(); ++i) {
    bool all = true;
    for (const auto& m : members) all = all && m.checks[i].priced && m.checks[i].device_ms > 0;
    if (!all) continue;
    const PublicCheck& c = first[i];
    const auto& r = *c.record;
    JointObservation o;
    o.published_ms = c.published_ms;
    o.floor = r.kind == PublicKind::kDecodeFloor;
    o.log_sd = o.floor ? kExportSpread : std::hypot(r.rel_sd.value.value_or(kUnknownRelSd), kExportSpread);
    if (r.chip != chip) o.terms.push_back(term_index(p, "chip", r.chip, c.chip_factor, priors.chip_log_sd));
    o.terms.push_back(term_index(p, "source", r.layout.exporter, 1.0, priors.source_log_sd));
    for (const auto& m : members) o.price_ms.push_back(m.checks[i].device_ms);
    p.obs.push_back(std::move(o));
    p.records.push_back(&r);
    p.part.push_back(false);
  }
  return p;
}

// A per-graph set's plain parts (decoder layers alone: its context sweep, part against part) as
// observations under one level term of the set's own, nearly flat (kShapeLevelLogSd): the chip's
// factor, the exporter's term and whatever else the set shares cancel into it, so the parts weigh
// the hypotheses by how the time grows with the context and the layers, never by its level
// (public-timings.md, caveat 2). The embedding's and the LM head's parts are left out: the sets
// publish them in forms layoutx does not price (a 16-bit head, a gather alone).
void add_part_observations(Problem& p, const PricedParts& parts) {
  for (const PricedPartSet& set : parts.sets) {
    std::vector<const PricedPart*> plain;
    for (const PricedPart& part : set.parts)
      if (part.plain && part.record->ms_per_graph) plain.push_back(&part);
    if (plain.size() < 2) continue;  // one part alone has nothing but a level
    const int level = term_index(p, "level", set.id + " " + set.model + " " + set.chip, 1.0, kShapeLevelLogSd);
    for (const PricedPart* part : plain) {
      JointObservation o;
      o.published_ms = *part->record->ms_per_graph;
      o.log_sd = std::hypot(part->record->rel_sd.value.value_or(kUnknownRelSd), kExportSpread);
      o.terms = {level};
      o.price_ms = part->member_ms;
      p.obs.push_back(std::move(o));
      p.records.push_back(part->record);
      p.part.push_back(true);
    }
  }
}

// Each hypothesis axis (a position in the '/'-separated names) whose values differ, with the
// weight of each value before and after.
std::vector<JointAxisValue> axis_weights(const std::vector<std::string>& names, const std::vector<double>& team,
                                         const std::vector<double>& joint) {
  std::vector<std::vector<std::string>> parts;
  for (const auto& n : names) {
    std::vector<std::string> segs;
    size_t at = 0;
    for (size_t slash; (slash = n.find('/', at)) != std::string::npos; at = slash + 1) segs.push_back(n.substr(at, slash - at));
    segs.push_back(n.substr(at));
    parts.push_back(std::move(segs));
  }
  std::vector<JointAxisValue> out;
  const size_t positions = parts.empty() ? 0 : parts.front().size();
  for (size_t pos = 0; pos < positions; ++pos) {
    std::vector<JointAxisValue> values;
    for (size_t h = 0; h < parts.size(); ++h) {
      if (parts[h].size() != positions) return {};  // names of another shape: no axes
      JointAxisValue* v = nullptr;
      for (auto& x : values)
        if (x.value == parts[h][pos]) v = &x;
      if (!v) v = &values.emplace_back(JointAxisValue{pos, parts[h][pos], 0, 0});
      v->team_weight += team[h];
      v->joint_weight += joint[h];
    }
    if (values.size() > 1) out.insert(out.end(), values.begin(), values.end());
  }
  return out;
}

// The records priced by each member, as the fit's problem, with the members' names and weights.
struct Priced {
  std::vector<std::string> names;
  std::vector<double> team_weights;
  Problem problem;
};

Priced price_problem(const costmodel::Predictor& mixture, const costmodel::PublicTimings& t,
                     const costmodel::RuntimeSpec& runtime, const std::string& chip, const JointPriors& priors) {
  // One set of members for both pricings: a graph priced for one is priced once, and the members'
  // names and weights are known when either priced anything.
  MixtureMembers each(mixture);
  const std::vector<MemberChecks> members = price_public_by_member(each, t, runtime, chip);
  const PricedParts parts = price_public_parts(each, t, runtime, chip);
  Priced out;
  for (size_t h = 0; h < each.size(); ++h) {
    out.names.push_back(each.name(h));
    out.team_weights.push_back(each.weight(h));
  }
  out.problem = build_problem(members, chip, priors);
  add_part_observations(out.problem, parts);
  return out;
}

}  // namespace

PublicJoint fit_public_joint(const costmodel::Predictor& mixture, const costmodel::PublicTimings& t,
                             const costmodel::RuntimeSpec& runtime, const std::string& chip,
                             const JointPriors& priors) {
  Priced priced = price_problem(mixture, t, runtime, chip, priors);
  const Problem& p = priced.problem;
  PublicJoint out;
  out.names = std::move(priced.names);
  out.team_weights = std::move(priced.team_weights);
  const JointFit fit = costmodel::fit_joint(p.terms, p.obs, out.team_weights);
  out.joint_weights = fit.weights;
  out.axes = axis_weights(out.names, out.team_weights, out.joint_weights);

  for (size_t k = 0; k < p.terms.size(); ++k) {
    JointTermReport r;
    r.kind = p.term_kind[k];
    r.key = p.term_key[k];
    r.prior = p.terms[k].prior_median;
    r.prior_log_sd = p.terms[k].prior_log_sd;
    r.posterior = costmodel::joint_term(fit, static_cast<int>(k), out.level);
    out.terms.push_back(r);
  }
  // Every record in-sample, then left out (its fit also says how far it pulls each term).
  std::vector<double> abs, held_abs, held, parts_abs, parts_held_abs;
  for (size_t i = 0; i < p.obs.size(); ++i) {
    JointRecord r;
    r.record = p.records[i];
    r.floor = p.obs[i].floor;
    r.part = p.part[i];
    r.published_ms = p.obs[i].published_ms;
    r.fitted = costmodel::predict_joint(fit, p.obs[i], out.level);
    std::vector<bool> use(p.obs.size(), true);
    use[i] = false;
    const JointFit without = costmodel::fit_joint(p.terms, p.obs, out.team_weights, use);
    r.held_out = costmodel::predict_joint(without, p.obs[i], out.level);
    for (int k : p.obs[i].terms) {
      JointTermReport& term = out.terms[static_cast<size_t>(k)];
      (r.floor ? term.floors : term.rates)++;
      const double pull = costmodel::joint_term(without, k, out.level).median / term.posterior.median - 1;
      if (std::abs(pull) > std::abs(term.pull)) {
        term.pull = pull;
        term.pulled_by = r.record->key;
      }
    }
    if (r.floor) {
      ++out.floors;
      out.floors_kept += r.kept = r.fitted.median <= r.published_ms;
      out.floors_kept_held_out += r.kept_held_out = r.held_out.median <= r.published_ms;
    } else {
      r.error = r.fitted.median / r.published_ms - 1;
      r.held_out_error = r.held_out.median / r.published_ms - 1;
      if (r.part) {
        ++out.parts;
        parts_abs.push_back(std::abs(r.error));
        parts_held_abs.push_back(std::abs(r.held_out_error));
      } else {
        ++out.rates;
        abs.push_back(std::abs(r.error));
        held_abs.push_back(std::abs(r.held_out_error));
        held.push_back(r.held_out_error);
      }
    }
    out.records.push_back(r);
  }
  out.median_abs_error = median(abs);
  out.held_out_median_abs_error = median(held_abs);
  out.held_out_median_error = median(held);
  out.parts_median_abs_error = median(parts_abs);
  out.parts_held_out_median_abs_error = median(parts_held_abs);
  // Each publication's records left out together (not a per-graph set's: without its parts, its
  // level is its prior's).
  std::map<std::string, std::vector<size_t>> by_id;
  std::vector<std::string> order;
  for (size_t i = 0; i < p.obs.size(); ++i) {
    if (p.part[i]) continue;
    const std::string& id = p.records[i]->id;
    if (!by_id.count(id)) order.push_back(id);
    by_id[id].push_back(i);
  }
  for (const auto& id : order) {
    std::vector<bool> use(p.obs.size(), true);
    for (size_t i : by_id[id]) use[i] = false;
    const JointFit without = costmodel::fit_joint(p.terms, p.obs, out.team_weights, use);
    JointSource s;
    s.id = id;
    std::vector<double> errs, errs_abs;
    for (size_t i : by_id[id]) {
      if (p.obs[i].floor) continue;
      const double e = costmodel::predict_joint(without, p.obs[i], out.level).median / p.obs[i].published_ms - 1;
      errs.push_back(e);
      errs_abs.push_back(std::abs(e));
    }
    s.rates = static_cast<int>(errs.size());
    s.median_error = median(errs);
    s.median_abs_error = median(errs_abs);
    out.sources.push_back(s);
  }
  return out;
}

JointWeights public_joint_weights(const costmodel::Predictor& mixture, const std::string& path,
                                  const costmodel::DeviceSpec& device, const JointPriors& priors) {
  const DiskMemo memo(user_cache_folder("public-joint"), code_stamp());
  const std::string key = mixture.calibration_id() + " " + hex(fnv1a(read_text_file(path)), 16) + " " +
                          hex(fnv1a(device.source.empty() ? std::string() : read_text_file(device.source)), 16) + " " +
                          hash_number(priors.chip_log_sd) + " " + hash_number(priors.source_log_sd);
  if (auto hit = memo.get(key)) {
    std::istringstream in(*hit);
    JointWeights w;
    double x = 0;
    if (in >> w.rates >> w.floors >> w.parts) {
      while (in >> x) w.weights.push_back(x);
      if (w.weights.size() == mixture.hypothesis_count()) return w;
    }
  }
  const costmodel::PublicTimings t = costmodel::read_public_timings(path);
  const Priced priced = price_problem(mixture, t, device.runtime, public_chip(device), priors);
  JointWeights w;
  w.weights = costmodel::fit_joint(priced.problem.terms, priced.problem.obs, priced.team_weights).weights;
  for (size_t i = 0; i < priced.problem.obs.size(); ++i)
    (priced.problem.part[i] ? w.parts : priced.problem.obs[i].floor ? w.floors : w.rates)++;
  std::ostringstream out;
  out << w.rates << ' ' << w.floors << ' ' << w.parts;
  out.precision(17);
  for (double x : w.weights) out << ' ' << x;
  memo.put(key, out.str());
  return w;
}

std::unique_ptr<costmodel::Predictor> public_joint_predictor(const costmodel::Predictor& mixture,
                                                             const std::vector<double>& joint_weights) {
  auto p = mixture.reweighted(joint_weights);
  if (!p) throw Error("the public records weigh hypotheses: " + mixture.calibration_id() + " is one calibration, not a mixture");
  return p;
}

costmodel::HypothesisSet with_joint_weights(costmodel::HypothesisSet set, const PublicJoint& joint) {
  for (auto& f : set.fits) {
    f.weight = 0;
    for (size_t h = 0; h < joint.names.size(); ++h)
      if (joint.names[h] == f.spec.name) f.weight = joint.joint_weights[h];
  }
  set.method += ", times each hypothesis's evidence from the public records (explorer/public_joint.h)";
  return set;
}

}  // namespace layoutx::explorer
