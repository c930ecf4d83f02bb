// How many measurements each strategy needs until every decision is the truth's optimum, over
// seeded truths of the simulated device (explorer/decision_loop.h). Prints the distribution per
// strategy: median, 90th percentile, how many did not converge within the budget.
//   decision_loop_report [--seeds N] [--precision P] [--max M] [--ctx C ...] [--one-structure] [--no-op-profiles] [--all-axes] [--verbose]
// --one-structure: the truth has the base spec's structure and the loop fits that one structure
// (default: the truth draws one of the device's hypotheses and the loop fits their mixture).
// --no-op-profiles: timings and compile-only checks only (op-level profiles are not offered).
// --all-axes: the exporters' forms are chosen too (default: held at the default variant's values,
// the team's layout question; the whole space takes minutes a seed on 2 cores).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>

#include "costmodel/op_level_predictor.h"
#include "explorer/decision_loop.h"
#include "model/model_loader.h"
#include "support/error.h"
#include "support/paths.h"

using namespace layoutx;

namespace {

double quantile(std::vector<int> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * (v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - lo) * (v[hi] - v[lo]);
}

}  // namespace

int main(int argc, char** argv) try {
  int seeds = 20;
  bool verbose = false, all_axes = false;
  explorer::LoopSetup s;
  s.ctxs.clear();
  std::string precision = "w4a16";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(a + ": needs a value");
      return argv[++i];
    };
    if (a == "--seeds") seeds = std::stoi(next());
    else if (a == "--precision") precision = next();
    else if (a == "--max") s.max_measurements = std::stoi(next());
    else if (a == "--ctx") s.ctxs.push_back(std::stoi(next()));
    else if (a == "--verbose") verbose = s.explain = true;
    else if (a == "--one-structure") s.competing_structures = false;
    else if (a == "--no-op-profiles") s.offer_op_profiles = false;
    else if (a == "--all-axes") all_axes = true;
    else throw Error("unknown argument " + a);
  }
  if (s.ctxs.empty()) s.ctxs = {1024, 4096};
  s.precision = model::parse_precision(precision);
  if (!all_axes) s.fixed_axes = explorer::exporter_forms_at_defaults(s.precision);
  s.model = model::load_model(model::kDefaultModel);
  s.device = costmodel::load_device_named(costmodel::kDefaultDevice);
  s.rules = costmodel::load_device_rules(s.device);
  s.first_export = costmodel::load_measurements(costmodel::device_file(s.device.calibration.measurements));
  char tmpl[] = "/tmp/layoutx-loop-XXXXXX";
  if (!mkdtemp(tmpl)) throw Error("cannot create a scratch folder");
  s.scratch_dir = tmpl;
  std::map<explorer::Strategy, std::vector<int>> needed;
  for (int seed = 1; seed <= seeds; ++seed)
    for (auto st : {explorer::Strategy::kNext, explorer::Strategy::kRandom, explorer::Strategy::kGrid}) {
      explorer::LoopRun r = explorer::run_loop(s, static_cast<uint64_t>(seed), st);
      needed[st].push_back(r.measurements);
      if (verbose) {
        std::printf("seed %d %s: %d%s\n", seed, explorer::to_string(st), r.measurements, r.converged ? "" : " (not converged)");
        for (const auto& l : r.log) std::printf("    %s\n", l.c_str());
      }
    }
  std::filesystem::remove_all(tmpl);
  std::printf("simulated device: %d seeded truths, %s, ctx", seeds, precision.c_str());
  for (int c : s.ctxs) std::printf(" %d", c);
  std::printf("; budget %d measurements (a run not right by then counts %d); %s\n\n", s.max_measurements,
              s.max_measurements + 1,
              s.competing_structures ? "truths draw a hypothesis, the loop fits the mixture" : "one structure");
  std::printf("candidates: timings, compile-only checks%s\n", s.offer_op_profiles ? " and op-level profiles of timed graphs" : "");
  std::string fixed;
  for (const auto& [axis, value] : s.fixed_axes) fixed += " " + axis + "=" + value;
  std::printf("choices: %s\n\n", fixed.empty() ? "every explored axis" : ("the layout axes; fixed" + fixed).c_str());
  // Round 0 is the same for every strategy: the truths whose first decision was already right
  // need 0 measurements whatever the strategy. The second table leaves them out.
  std::vector<bool> open(seeds, false);
  for (int i = 0; i < seeds; ++i) open[i] = needed[explorer::Strategy::kNext][i] > 0;
  auto table = [&](bool only_open) {
    std::printf("%-8s %6s %8s %8s %8s %14s\n", "strategy", "truths", "median", "p90", "mean", "not converged");
    for (auto& [st, all] : needed) {
      std::vector<int> v;
      for (int i = 0; i < seeds; ++i)
        if (!only_open || open[i]) v.push_back(all[i]);
      if (v.empty()) continue;
      double mean = 0;
      int miss = 0;
      for (int x : v) mean += x, miss += x > s.max_measurements;
      std::printf("%-8s %6zu %8.1f %8.1f %8.2f %14d\n", explorer::to_string(st), v.size(), quantile(v, 0.5),
                  quantile(v, 0.9), mean / v.size(), miss);
    }
  };
  std::printf("every truth:\n");
  table(false);
  std::printf("\nthe truths whose first decision was wrong:\n");
  table(true);
  return 0;
} catch (const std::exception& e) {
  std::cerr << "decision_loop_report: error: " << e.what() << "\n";
  return 2;
}
