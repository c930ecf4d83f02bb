// An op-level device profile of a timed graph (per-op execution times, e.g. AI Hub's
// execution_detail) as calibration records: one op share per cost class, so `calibrate --db`
// fits what `layoutx next` asked an op-level profile for (issue "decisions that know what was
// never tried": the loop back).
//
// Matching profile rows to the graph's lowered ops: the converter keeps our op names but
// rewrites them ("attn/k_concat" -> "_attn_k_concat", a decomposed op's parts "mlp/gelu/erf"
// -> "mlp_gelu_erf", inserted conversions "..._converted_input_0"). Both sides are normalized
// (lower case, every run of other characters one '_', none at the ends) and a row belongs to the
// op whose normalized name is the longest equal to it or a prefix of it followed by '_'. A share
// is the class's matched time over the time of every row (matched or not), as the first export's
// shares were read off its profile.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "costmodel/measurements.h"

namespace layoutx::costmodel {

// Absolute standard deviation of a share read off a per-op profile: a stated 2 points (shares of
// one build move by a point or two between runs, and per-op attribution is coarser; looser than
// the shipped file's hand-read shares, noise.share_sd 0.005). `calibrate --db` gives it to each
// share, and `next` values an op-level profile with the same scatter (PlanOptions::share_sd).
inline constexpr double kOpProfileShareSd = 0.02;

struct ProfiledOp {
  std::string name;  // as the profile names it
  double ms = 0;     // execution time (any unit: only ratios are used)
};

struct OpProfileShares {
  std::vector<MeasurementRecord> shares;  // kOpShare, one per class with matched time
  std::vector<std::string> unmatched;     // profile rows that match no lowered op
};

// `graph`: the profiled graph (model, layer, context, cache_entries, variant; a kLayerTime
// record). Share ids read "<id_prefix>:<class>", sources `source`, each with absolute sd
// `share_sd`. Rows with no time, or a profile with no time at all, give no shares.
OpProfileShares shares_from_op_profile(const MeasurementRecord& graph, const std::vector<ProfiledOp>& rows,
                                       const std::string& id_prefix, const std::string& source, double share_sd);

// The normalized form of an op name used for matching (exposed for tests and messages).
std::string normalized_op_name(const std::string& name);

}  // namespace layoutx::costmodel
