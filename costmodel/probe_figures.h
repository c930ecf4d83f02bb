// What each hypothesis predicts for the device's probes (costmodel/probe_spec.h), and the
// combined predictor's figure with its interval: the table `calibrate` prints beside the fit.
#pragma once
#include <vector>

#include "costmodel/hypothesis_fit.h"
#include "costmodel/predictor.h"

namespace layoutx::costmodel {

struct ProbeFigures {
  const ProbeSpec* probe = nullptr;      // into the set's device (not owned)
  std::vector<HypothesisFigure> each;    // every hypothesis of the set, in the set's order, mass 1
  Prediction combined;                   // `pr`'s figure (the kept hypotheses' mixture)
};

// One entry per probe the set's device lists, in its order; none when it lists none. Each
// probe's model is loaded once (throws Error naming it if it does not load).
std::vector<ProbeFigures> probe_figures(const HypothesisSet& set, const Predictor& pr);

}  // namespace layoutx::costmodel
