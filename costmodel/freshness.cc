#include "costmodel/freshness.h"

#include "costmodel/calibration.h"
#include "costmodel/hypotheses_document.h"

namespace layoutx::costmodel {

std::string fit_stamp(SavedFit kind, const std::vector<std::string>& file_bytes, const DeviceSpec& device) {
  return kind == SavedFit::kHypotheses ? hypotheses_source_hash(file_bytes, device) : source_hash(file_bytes, device);
}

Freshness check_freshness(SavedFit kind, const std::string& stamp, const std::string& data_hash,
                          const std::string& data_bytes, const std::string& data_path, const DeviceSpec& device) {
  Freshness f;
  const std::string expected = fit_stamp(kind, {data_bytes}, device);
  f.fresh = !stamp.empty() && stamp == expected;
  if (f.fresh) return f;
  if (kind == SavedFit::kHypotheses) {
    // No data hash in a hypotheses document: the stamp decides.
    f.why = "source_hash: " + (stamp.empty() ? std::string("none") : "'" + stamp + "'") +
            ", but the data and device spec hash to '" + expected + "' (they changed since it was written)";
    return f;
  }
  f.records = load_measurements_text(data_bytes, data_path);
  f.parsed = true;
  const std::string hash = costmodel::data_hash(f.records, device);
  f.fresh = !data_hash.empty() && data_hash == hash;
  if (!data_hash.empty() && !f.fresh)
    f.why = "data hash " + data_hash + " does not match the measurements and priors (" + hash + ")";
  return f;
}

}  // namespace layoutx::costmodel
