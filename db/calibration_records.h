// The layer-level measurements of one device as records for the cost model's fit
// (`layoutx calibrate --db`), and recording a calibration. Kept free of costmodel types so the
// database does not depend on the cost model; the calibrate verb maps these onto its record type.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "db/sqlite.h"

namespace layoutx::db {

struct LayerMeasurementRow {
  std::string model;
  std::string variant_key;   // canonical key (model::parse_variant reads it back)
  std::string layer_type;    // sliding / full
  int ctx = 0;               // tokens
  std::optional<int> cache_entries;
  std::string precision;
  double ms = 0.0;           // milliseconds per decode step of one layer
  int samples = 1;
  std::string boundary;      // the run's timing boundary
  std::string source;        // the run's source file
};

// Every layer measurement of `device` (all models), in ingest order. `boundaries` filters the
// timing boundaries to use (empty = all); callers pass the device spec's `boundaries`.
std::vector<LayerMeasurementRow> records_for_device(Connection& c, const std::string& device,
                                                    const std::vector<std::string>& boundaries = {});

struct OpShareRow {
  std::string model, layer_type, selector, op;
  std::optional<int> ctx;
  double share_min = 0.0, share_max = 0.0;
};
std::vector<OpShareRow> op_shares_for_device(Connection& c, const std::string& device);

// Stores a calibration; false (and nothing written) when one with that id is already stored
// (the same data refitted gives the same id).
bool record_calibration(Connection& c, const std::string& id, const std::string& device,
                        const std::string& coefficients, const std::string& data_hash,
                        const std::string& provenance, std::optional<double> loo_error);

}  // namespace layoutx::db
