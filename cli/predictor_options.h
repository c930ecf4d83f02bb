// The flags that choose the cost model: --device (a device spec under configs/devices/ with its
// saved calibration). Shared by predict, step, select, whatif, regress.
#pragma once
#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "costmodel/predictor.h"

namespace layoutx::cli {

struct PredictorOptions {
  std::string device = "galaxy-s25";
  void add_to(CLI::App& app);
  // Loads the device's calibrated predictor. Throws Error naming the device and what is missing.
  std::unique_ptr<costmodel::Predictor> load() const;
};

}  // namespace layoutx::cli
