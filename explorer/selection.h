// Per-layer-type selection under uncertainty: the fastest variant that converts and keeps
// fidelity; where intervals overlap it is a tie, and among the tied the one that changes the
// fewest axes from the incumbent wins (a change must earn its place).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "explorer/evaluator.h"

namespace layoutx::explorer {

struct SelectionPolicy {
  // Fidelity floor: a candidate's SNR may fall at most this far below the incumbent's (dB).
  // The default keeps what does not lose fidelity against the incumbent, up to run-to-run noise.
  double fidelity_slack_db = 1.0;
  // An absolute floor instead (dB), when set.
  std::optional<double> min_snr_db;
  // A change must earn its place: a candidate within this fraction of the fastest's latency
  // ties with it even where the model is sure of the sign. The layer-level uncertainty says
  // little about a few microseconds between two small ops (device-findings.md: MatMul is the
  // cheaper op on HTP, while the calibrated model prices a [2,4,1] MatMul above a Mul +
  // ReduceSum by 3 us in a 1.5 ms layer). 0 turns it off.
  double min_gain_fraction = 0.01;
  // Axes fixed by the question (axis -> value, e.g. {"returns", "window"}): only variants with
  // these values are candidates (whatif --set sliding.returns=window).
  std::map<std::string, std::string> fixed_axes;
  // The layout changes are counted from (ties go to the fewest changes), at the question's
  // precision; unset: the layer type's first export (incumbent()). propose sets the team's default.
  std::optional<model::Variant> incumbent;
  // Known-good by default: only candidates whose conversion is known (compiles: yes) can win.
  // With this set, unknown and contested candidates compete too (--allow-untested).
  bool allow_untested = false;
};

struct Candidate {
  Evaluation eval;
  int axis_changes = 0;        // from the incumbent
  bool eligible = false;       // built, predicted, not known to fail, meets the fidelity floor
  std::string excluded_why;    // when not eligible
  double p_faster_than_chosen = 0.0;  // probability it is faster than the chosen one
};

// A candidate that was not allowed to win because nobody knows whether it converts (compiles:
// unknown or contested), and that the model predicts faster than the chosen one.
struct Untested {
  Candidate candidate;
  double saving_ms = 0.0;  // chosen latency - its latency, per layer (> 0)
  std::string settle;      // the measurement that would settle it
};

struct Choice {
  model::LayerType layer = model::LayerType::kSliding;
  model::Variant incumbent;
  Candidate chosen;
  // The fastest eligible candidate distinct from the chosen one: not a twin whose latency is
  // within the policy's minimum gain (the model cannot tell such twins apart; they are in tied).
  std::optional<Candidate> runner_up;
  double margin_ms = 0.0;              // runner_up latency - chosen latency
  bool tie = false;                    // runner-up and chosen differ by less than the difference's interval
                                       // (or than the policy's minimum gain)
  std::vector<Candidate> tied;         // candidates tied with the fastest
  std::vector<Candidate> candidates;   // all, fastest first; excluded ones carry their reason
  std::vector<Untested> untested;      // fastest first; only those predicted faster than the chosen
  bool chose_untested = false;         // the chosen one's conversion is not known (allowed, or nothing known)
  // The fidelity floor the candidates were held to (dB) and the incumbent's own SNR it was
  // taken from (floor = incumbent - slack); empty without a fidelity check. With an absolute
  // floor (--min-snr-db) the incumbent is not measured.
  std::optional<double> floor_db, incumbent_snr_db;
  std::string why;                     // one line: why this one
};

// Chooses among meaningful_variants(precision) for one layer type at one context.
// Throws Error if no candidate is eligible.
Choice select_layer(Evaluator& ev, const model::LayerSpec& layer, model::Precision precision,
                    const SelectionPolicy& policy = {});

}  // namespace layoutx::explorer
