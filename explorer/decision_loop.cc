#include "explorer/decision_loop.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <sstream>

#include "costmodel/calibration.h"
#include "costmodel/predictor_factory.h"
#include "costmodel/repeated_timings.h"
#include "db/costmodel_records.h"
#include "db/ingest.h"
#include "db/schema.h"
#include "explorer/design_space.h"
#include "explorer/measurement_plan.h"
#include "explorer/selection.h"
#include "model/builder.h"
#include "support/error.h"

namespace layoutx::explorer {

const char* to_string(Strategy s) {
  switch (s) {
    case Strategy::kNext: return "next";
    case Strategy::kRandom: return "random";
    case Strategy::kGrid: return "grid";
  }
  return "?";
}

namespace {
namespace fs = std::filesystem;

// The hidden device of one seed.
struct Truth {
  std::string hypothesis;    // which of the device's hypotheses is true ("" if it has none)
  costmodel::DeviceSpec device;  // the spec derived for it: its coefficients and structure
  Eigen::VectorXd theta;     // us per feature unit, as the calibration keeps them
};

// A hypothesis drawn uniformly from the device's (a stated prior: none is favoured before the
// data), then its coefficients from their priors: log-normal around each prior with its relative
// sd (mean = prior), floored at the physical bound.
Truth draw_truth(const costmodel::DeviceSpec& base, bool competing, std::mt19937_64& rng) {
  Truth t;
  t.device = base;
  if (competing && !base.hypotheses.empty()) {
    const auto& h = base.hypotheses[std::uniform_int_distribution<size_t>(0, base.hypotheses.size() - 1)(rng)];
    t.hypothesis = h.name;
    t.device = costmodel::with_hypothesis(base, h);
  }
  const costmodel::DeviceSpec& d = t.device;
  std::normal_distribution<double> n01(0.0, 1.0);
  t.theta.resize(static_cast<Eigen::Index>(d.coefficients.size()));
  for (size_t i = 0; i < d.coefficients.size(); ++i) {
    const auto& c = d.coefficients[i];
    const double s = std::log1p(c.rel_sd * c.rel_sd) > 0 ? std::sqrt(std::log1p(c.rel_sd * c.rel_sd)) : 0.0;
    t.theta[static_cast<Eigen::Index>(i)] = std::max(c.min_value, c.prior * std::exp(s * n01(rng) - 0.5 * s * s));
  }
  return t;
}

std::string form_of(const std::string& reason) { return reason.substr(0, reason.find(':')); }

// A predictor whose coefficients are the truth's: its rows are the device spec's, so its
// latencies are the true ones; its legality is the shipped rules' (the open questions).
std::unique_ptr<costmodel::Predictor> truth_predictor(const LoopSetup& s, const Truth& t) {
  costmodel::Calibration c;
  c.device = t.device.name;
  c.id = "truth";
  for (const auto& k : t.device.coefficients) c.names.push_back(k.name);
  c.theta = t.theta;
  c.covariance = Eigen::MatrixXd::Zero(t.theta.size(), t.theta.size());
  return costmodel::predictor_from_calibration(t.device, c, s.rules);
}

// The cost model the loop decides with, fitted on what was measured so far: the device's
// hypotheses, each fitted and weighted as `calibrate` does (the mixture `next` values
// measurements under), or the one structure of a device without hypotheses.
std::unique_ptr<costmodel::Predictor> fitted_predictor(const LoopSetup& s, const std::vector<costmodel::MeasurementRecord>& records,
                                                       const costmodel::RuleSet& rules) {
  return costmodel::fit_predictor(records, s.device, rules, s.competing_structures);
}

// The truth's hidden outcome of one open legality question: a fair coin, fixed by the seed and
// the form (the same for every strategy and in whatever order it is asked).
bool opens(uint64_t seed, const std::string& form) {
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(std::hash<std::string>{}(form))};
  std::mt19937_64 rng(seq);
  return std::bernoulli_distribution(0.5)(rng);
}

// Whether the truth converts this graph: known outcomes as the rules say, open forms as drawn.
bool truly_compiles(const costmodel::Legality& l, uint64_t seed) {
  if (l.compiles == costmodel::Compiles::kYes) return true;
  if (l.compiles == costmodel::Compiles::kNo) return false;
  for (const auto& r : l.reasons) {
    if (r.find(": no:") != std::string::npos) return false;
    if (!opens(seed, form_of(r))) return false;
  }
  return true;
}

// The name QNN's converter gives one of our ops in a profile: every '/' an '_', with a leading
// '_' ("attn/k_concat" -> "_attn_k_concat"), as its ONNX frontend sanitizes node names.
std::string converter_name(const std::string& ours) {
  std::string n = "_" + ours;
  std::replace(n.begin(), n.end(), '/', '_');
  return n;
}

// A profile as Qualcomm AI Hub returns it (profile-formats.md): the headline and its samples,
// and with `ops` one execution_detail row per lowered op (its true time with the same scatter,
// in microseconds, named as the converter names it).
std::string aihub_profile_json(double true_ms, const std::vector<costmodel::OpCost>& ops, double noise_rel,
                               std::mt19937_64& rng) {
  std::normal_distribution<double> n01(0.0, 1.0);
  const double us = true_ms * 1e3 * (1.0 + noise_rel * n01(rng));
  std::ostringstream o;
  o << "{\"execution_summary\": {\"estimated_inference_time\": " << std::llround(us) << ", \"all_inference_times\": [";
  for (int i = 0; i < 5; ++i) o << (i ? ", " : "") << std::llround(us * (1.0 + 0.005 * n01(rng)));
  o << "]}, \"execution_detail\": [";
  for (size_t i = 0; i < ops.size(); ++i)
    o << (i ? ", " : "") << "{\"name\": \"" << converter_name(ops[i].name) << "\", \"type\": \"" << ops[i].kind
      << "\", \"compute_unit\": \"NPU\", \"execution_time\": "
      << std::max(0.0, ops[i].ms * 1e3 * (1.0 + noise_rel * n01(rng))) << "}";
  o << "]}\n";
  return o.str();
}

struct Round {
  std::vector<Decision> decisions;
  bool right = true;
};

}  // namespace

std::map<std::string, std::string> exporter_forms_at_defaults(model::Precision precision) {
  const model::Variant base = model::Variant{}.set(precision);
  std::map<std::string, std::string> fixed;
  for (const auto& axis : model::design_space().exporter_axes()) fixed[axis] = model::axis_value(base, axis);
  return fixed;
}

LoopRun run_loop(const LoopSetup& s, uint64_t seed, Strategy strategy) {
  LoopRun run;
  run.seed = seed;
  run.strategy = strategy;
  std::mt19937_64 truth_rng(seed), device_rng(seed * 7919 + 1), pick_rng(seed * 104729 + static_cast<int>(strategy));
  Truth truth = draw_truth(s.device, s.competing_structures, truth_rng);
  run.truth_hypothesis = truth.hypothesis;
  auto oracle = truth_predictor(s, truth);
  Evaluator truth_ev(*oracle);

  // 1. The first export, measured on the simulated device.
  std::vector<costmodel::MeasurementRecord> seed_records;
  for (auto r : s.first_export) {
    if (r.kind != costmodel::MeasurementRecord::Kind::kLayerTime) continue;
    const model::LayerGraph g = costmodel::build_graph(r);
    const double true_ms = oracle->predict(g).latency_ms;
    r.ms = true_ms * (1.0 + s.timing_noise_rel * std::normal_distribution<double>(0.0, 1.0)(device_rng));
    r.source = "simulated:" + r.id;
    seed_records.push_back(r);
  }
  // 2. The database the answers are ingested into.
  const fs::path db_path = fs::path(s.scratch_dir) / ("loop-" + std::to_string(seed) + "-" + to_string(strategy) + ".sqlite");
  fs::remove(db_path);
  auto db = db::open_database(db_path.string());
  costmodel::RuleSet rules = s.rules;
  std::set<std::string> timed;
  for (const auto& r : seed_records) timed.insert(graph_key(s.model.layer(r.layer, r.context), r.variant));

  for (int step = 0;; ++step) {
    // 3. Recalibrate on everything measured so far; re-select.
    const auto records = db::with_database_records(*db, s.device.name, s.device.boundaries, {}, seed_records);
    const auto fitted = fitted_predictor(s, records, rules);
    const costmodel::Predictor& predictor = *fitted;
    Evaluator ev(predictor);
    SelectionPolicy policy;
    policy.fixed_axes = s.fixed_axes;
    // Right within what one timing can resolve: the device's scatter, or the minimum gain.
    const double tolerance = std::max(policy.min_gain_fraction, s.timing_noise_rel);
    Round round;
    for (int ctx : s.ctxs)
      for (auto type : {model::LayerType::kSliding, model::LayerType::kFull}) {
        if (s.model.count(type) == 0) continue;
        const model::LayerSpec layer = s.model.layer(type, ctx);
        Choice c = select_layer(ev, layer, s.precision, policy);
        // 4. Right when the chosen graph converts on the truth and is within `tolerance` of the
        // truth's fastest graph that converts.
        double best = 1e300, chosen_true = 0;
        bool chosen_ok = false;
        for (const auto& k : c.candidates) {
          if (k.eval.status != EvalStatus::kOk) continue;
          const Evaluation& te = truth_ev.evaluate(layer, k.eval.variant);
          if (!truly_compiles(te.prediction.legality, seed)) continue;
          best = std::min(best, te.prediction.latency_ms);
          if (k.eval.variant == c.chosen.eval.variant) chosen_ok = true, chosen_true = te.prediction.latency_ms;
        }
        const bool right = chosen_ok && chosen_true <= best * (1.0 + tolerance);
        if (!right && s.explain)
          run.log.push_back("  wrong: " + std::string(model::to_string(type)) + " ctx " + std::to_string(ctx) + " chose " +
                            c.chosen.eval.variant.key() + " true " + std::to_string(chosen_true) + " (ok " +
                            std::to_string(chosen_ok) + ") best " + std::to_string(best) + "; why " + c.why);
        round.right = round.right && right;
        round.decisions.push_back({ctx, s.model.count(type), layer, std::move(c)});
      }
    if (round.right) {
      run.converged = true;
      run.measurements = step;
      run.log.push_back("after " + std::to_string(step) + " measurements: every decision is the truth's optimum");
      return run;
    }
    if (step >= s.max_measurements) break;
    // 5. The strategy picks one of the candidate measurements.
    PlanOptions opt;
    opt.already_timed = timed;
    auto plan = plan_measurements(predictor, round.decisions, opt);
    if (!s.offer_op_profiles)
      std::erase_if(plan, [](const PlannedMeasurement& m) { return m.kind == PlannedMeasurement::Kind::kOpProfile; });
    if (plan.empty()) {
      run.log.push_back("no measurement left to take");
      break;
    }
    size_t pick = 0;
    if (strategy == Strategy::kRandom) {
      pick = std::uniform_int_distribution<size_t>(0, plan.size() - 1)(pick_rng);
    } else if (strategy == Strategy::kGrid) {
      auto order = [](const PlannedMeasurement& m) {
        return m.variant.key() + "|" + model::to_string(m.layer.type) + "|" + std::to_string(100000000 + m.ctx);
      };
      for (size_t i = 1; i < plan.size(); ++i)
        if (order(plan[i]) < order(plan[pick])) pick = i;
    }
    const PlannedMeasurement& m = plan[pick];
    // 6. The simulated device answers.
    if (m.kind == PlannedMeasurement::Kind::kTiming || m.kind == PlannedMeasurement::Kind::kOpProfile) {
      // A timing and an op-level profile are the same AI Hub profile job; the op-level one is
      // read for its per-op rows too (the calibration fits them as op shares).
      const costmodel::Prediction& truth_p = truth_ev.evaluate(m.layer, m.variant).prediction;
      const double true_ms = truth_p.latency_ms;
      const bool per_op = m.kind == PlannedMeasurement::Kind::kOpProfile;
      const std::string json = aihub_profile_json(true_ms, per_op ? truth_p.ops : std::vector<costmodel::OpCost>{},
                                                  s.timing_noise_rel, device_rng);
      db::IngestContext ctx;
      ctx.device = s.device.name;
      ctx.model = s.model.name;
      ctx.variant = m.variant.key();
      ctx.layer = model::to_string(m.layer.type);
      ctx.ctx = m.ctx;
      db::ingest_text(*db, json, "simulated/" + std::to_string(step) + ".json", ctx);
      timed.insert(graph_key(m.layer, m.variant));
      run.log.push_back(std::string(per_op ? "op-profile " : "timing ") + m.variant.key() + " " + ctx.layer + " ctx " +
                        std::to_string(m.ctx) + ": " + std::to_string(true_ms) + " ms true" +
                        (per_op ? " (pins " + m.profile_class + ")" : "") + "; valued " + std::to_string(m.value_ms) +
                        " ms/step");
    } else if (m.kind == PlannedMeasurement::Kind::kCompileOnly) {
      const std::string form = m.legality_question.substr(0, m.legality_question.find(" at "));
      const bool ok = opens(seed, form);
      for (auto& f : rules.forms)
        if (f.id == form)
          f.records[s.precision] = {{ok ? costmodel::Compiles::kYes : costmodel::Compiles::kNo, ok ? 0 : 14,
                                     "simulated device", "compile-only job"}};
      run.log.push_back("compile-only " + m.legality_question + ": " + (ok ? "ok" : "fail"));
    }
    run.measurements = step + 1;
  }
  run.converged = false;
  run.measurements = s.max_measurements + 1;
  return run;
}

}  // namespace layoutx::explorer
