// Repeated measurements of one graph, combined before the fit: one timing per graph (the mean of
// its repeats, with their count), never N copies counted as N independent measurements.
//
// Why one equation per graph and not the repeats' mean with sd / sqrt(N): the fit's residuals
// are dominated by the cost model's own error from one graph to the next (the leave-one-out rms
// is several percent), which repeating a graph does not reduce. So a graph measured 1000 times
// weighs what a graph measured once does, and its repeats only sharpen the value and say how
// noisy it is: the spread (sample sd / mean) is the timing's relative sd when it is larger than
// the stated one (a few identical repeats do not prove zero noise, so the stated sd is a floor).
#pragma once
#include <vector>

#include "costmodel/measurements.h"

namespace layoutx::costmodel {

// `count` timings of one graph, already reduced (the database aggregates in SQL).
struct RepeatedTiming {
  MeasurementRecord record;  // kLayerTime; ms = the mean of the repeats; sd = the stated relative sd
  int count = 1;
  double sum_sq_dev_ms2 = 0;  // sum of squared deviations from the mean (ms^2)
};

// `records` in order with one timing per graph (graph_key), at the place of that graph's first
// timing, over the timings of `records` and then of `repeated` (new graphs appended). A graph measured once
// keeps its record unchanged; a graph measured N > 1 times gets the first record's id with
// " (mean of N)", the pooled mean and sd = max(stated sds, pooled sample sd / mean).
std::vector<MeasurementRecord> combine_repeated_timings(const std::vector<MeasurementRecord>& records,
                                                        const std::vector<RepeatedTiming>& repeated = {});

}  // namespace layoutx::costmodel
