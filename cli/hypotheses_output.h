// What `calibrate` prints of the hypothesis set: each hypothesis's coefficients as rates with
// their priors, its weight and held-out figures, the calibration report (costmodel/
// calibration_report.h), and each hypothesis's predictions of the device's probes (variants nobody
// measured in this data; costmodel/probe_figures.h), with the combined figure and its interval.
#pragma once
#include <ostream>

#include "costmodel/calibration_report.h"
#include "costmodel/predictor.h"
#include "explorer/interval_widths.h"
#include "support/json_writer.h"

namespace layoutx::cli {

// `pr` is the predictor the verbs use (the kept hypotheses' mixture: its figure is the combined one).

void print_hypotheses(const costmodel::HypothesisSet& set, const costmodel::CalibrationReport& rep,
                      const costmodel::Predictor& pr, std::ostream& out);
void write_hypotheses_json(const costmodel::HypothesisSet& set, const costmodel::CalibrationReport& rep,
                           const costmodel::Predictor& pr, JsonWriter& w);

// The predictor's 90% half-widths on the records' model's design space, measured graphs apart.
void print_interval_widths(const explorer::IntervalWidths& w, std::ostream& out);
void write_interval_widths_json(const explorer::IntervalWidths& w, JsonWriter& jw);

// A coefficient as a physical rate with its unit ("84.8 GB/s", "5.0 us", "2000 GMAC/s").
std::string rate_text(costmodel::Term t, double value);

}  // namespace layoutx::cli
