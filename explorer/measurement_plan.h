// Which measurement would most improve the open decisions (layoutx next): the value of
// information of each device measurement under the cost model's current belief.
//
// The model of the device, the one select's intervals use: the latency of layer graph k is
// d_k . theta / 1e3 + u_k, with theta ~ N(mean, covariance) the calibrated coefficients and u_k =
// model_rel_sd * L_k * eta the model's relative error, one eta ~ N(0, 1) shared by every graph (so
// the error of a difference is model_rel_sd * |L_a - L_b|, as in select's difference interval); a
// timing observes a graph with a further scatter of timing_rel_sd * L_k. Every quantity a decision
// looks at is then jointly normal with a new timing, so after the timing each candidate's
// posterior mean moves along one line in a standard normal z (a_k + b_k z), and the decision
// taken afterwards is the lowest line.
//
// With competing hypotheses of the device (costmodel/hypothesis_fit.h) the belief is their mixture:
// each hypothesis is such a model with its weight, a timing is drawn from the mixture, and after
// it the weights become p(h | timing), so a timing where the hypotheses disagree is worth what
// telling them apart changes in the decisions.
//
// Value of a timing (knowledge gradient): the expected reduction of the step latency of the
// decisions made after seeing it, E[min_k a_k] - E[min_k (a_k + b_k z)] summed over the
// decisions (per layer type and context) weighted by their layer counts: ms per step. It is
// >= 0, and 0 when no decision can change. Value of a compile-only check of an untested
// candidate: P(it compiles) times the step latency it would save if it then won (its predicted
// saving over the chosen one, when positive). P(compiles) is a stated prior: 0.5 for contested
// (two records disagree) and for never tried.
//
// Value of an op-level profile of a graph already timed: the profile splits the layer's time by
// op (QNN's per-op profile); in the linear model the time of the ops of one class c is
// x_c . theta / 1e3, with x_c the graph's design row restricted to those ops
// (Predictor::class_rows), so observing it is valued exactly like a timing with x_c in place of
// x, its scatter share_sd times the layer's latency. Only one class is counted: the profile's
// value is taken as that of its most valuable class (a lower bound of the whole profile's, whose
// classes are observed jointly; the joint value needs the classes' correlations, left out).
//
// Value of a whole-model timing on the device of a layout none of the decisions look at (an
// exporter's layout of another model, as the public records time it on other chips or runtimes):
// its graphs' time is the sum of their design rows dotted with theta, so it is valued like a
// timing with that row, its scatter widened by what the rows leave out (whole_model_rel_sd). It
// tells hypotheses apart where the exporters' forms (8-bit caches, per-head ops, block weights)
// are priced differently by them, which is what moves the team's decisions.
#pragma once
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "costmodel/op_profile_shares.h"
#include "costmodel/predictor.h"
#include "costmodel/runtime_spec.h"
#include "explorer/evaluator.h"
#include "explorer/selection.h"

namespace layoutx::explorer {

// One open decision: the choice for one layer type at one context, and its layer count.
struct Decision {
  int ctx = 0;
  int count = 0;  // layers of this type in the model
  model::LayerSpec layer;
  Choice choice;
};

struct PlanOptions {
  // Scatter of a repeated device timing around its own mean (relative). A stated prior: AI Hub
  // profile jobs report a median over many inferences; a few percent between jobs is assumed.
  double timing_rel_sd = 0.02;
  double p_compiles_contested = 0.5;  // stated prior: the records disagree
  double p_compiles_unknown = 0.5;    // stated prior: never tried
  // Scatter of one op class's share of a layer in a per-op profile (absolute, of the layer's
  // time). A stated prior: profile shares of one build move by a point or two between runs, and
  // attributing an op's time (threads overlap on the HTP) is coarser than that. The same sd
  // calibrate --db gives the shares it reads off such a profile.
  double share_sd = costmodel::kOpProfileShareSd;
  // Graphs already timed in the data the belief was fitted on (graph_key): not proposed again.
  std::set<std::string> already_timed;
  // A whole-model timing's error beyond the graphs' own (relative): what its design row leaves out
  // (the execute saved by merging graphs into parts, the host's terms, the runtime that timed it).
  // A stated prior: the team would time the export in its own harness on its own phone (no
  // exporter's or chip's term), and the public file calls 10-20% between runs and releases normal.
  double whole_model_rel_sd = 0.10;
};

// The identity of one graph: the layer's shape and the variant (a sliding layer's graph is the
// same at every context).
std::string graph_key(const model::LayerSpec& layer, const model::Variant& v);

struct PlannedMeasurement {
  enum class Kind { kTiming, kCompileOnly, kOpProfile, kWholeModel };
  Kind kind = Kind::kTiming;
  model::Variant variant;
  model::LayerSpec layer;  // the layer type and its context / cache
  int ctx = 0;
  double predicted_ms = 0;   // the cost model's current figure for it
  double value_ms = 0;       // expected reduction of the step latency (ms per step, summed over decisions)
  double p_choice_changes = 0;  // probability that some decision changes after it
  double predictive_sd_ms = 0;  // timing: sd of what the device would show (model + scatter)
  // What it settles. A timing: the decision it is most likely to change (its label, the current
  // choice and the alternative it most often changes to, with that probability). A compile-only
  // check: the legality question (the form and its outcome), which every listed graph shares.
  std::string decision;      // e.g. "sliding @ ctx 1024"
  std::optional<model::Variant> current, alternative;
  double p_alternative = 0;
  std::string legality_question;  // e.g. "score-join at w4a16 (contested)"
  int graphs_sharing = 1;         // compile-only: how many listed graphs the outcome decides
  // op-profile: the op class whose time is worth the most to observe, and that time (ms) under
  // the mixture.
  std::string profile_class;
  double class_ms = 0;
  // whole-model: the layout timed (e.g. an exporter's layout file of another model); `layer` is
  // then the layer of the decision it would most change.
  std::string whole_model;
};
const char* to_string(PlannedMeasurement::Kind k);  // "timing" / "compile-only" / "op-profile" / "whole-model"

// Every candidate measurement of the decisions, most valuable first (ties, e.g. when no decision
// can change: the more likely to change one, then the less predictable timing, then timings
// before compile checks). Timings are of candidates known to compile (compiles: yes) not timed
// yet; op-level profiles of those already timed (options.already_timed); compile-only checks of
// the untested candidates that would be faster. Throws Error when the
// predictor has no linear belief.
std::vector<PlannedMeasurement> plan_measurements(const costmodel::Predictor& predictor,
                                                  const std::vector<Decision>& decisions,
                                                  const PlanOptions& options = {});

// A whole model's timing on the device that is none of the decisions' graphs: e.g. an exporter's
// layout of another model (a public record this device lacks). Under the linear belief its
// latency is row . theta / 1e3 (explorer::whole_model_row).
struct WholeModelCandidate {
  std::string name;  // e.g. the layout file
  int ctx = 0;
  double predicted_ms = 0;  // its step as priced (ms per token)
  std::vector<double> row;
};
// The candidate of a whole-model layout file (propose --out, configs/layouts/exporters/): its
// model (beside the file, else shipped) at the file's context, priced with `ev`'s predictor.
// Throws Error naming the file.
WholeModelCandidate whole_model_candidate(Evaluator& ev, const std::string& layout_path,
                                          const costmodel::RuntimeSpec& runtime);
// The exporters' whole-model layout files shipped in configs/layouts/exporters/, sorted.
std::vector<std::string> shipped_exporter_layouts();
// Each candidate valued like a timing (the knowledge gradient above), with a scatter of
// hypot(timing_rel_sd, whole_model_rel_sd) times its latency; most valuable first. Throws Error
// when the predictor has no linear belief or a row is not the belief's size.
std::vector<PlannedMeasurement> value_whole_models(const costmodel::Predictor& predictor,
                                                   const std::vector<Decision>& decisions,
                                                   const std::vector<WholeModelCandidate>& candidates,
                                                   const PlanOptions& options = {});

}  // namespace layoutx::explorer
