#include "cli/predictor_options.h"

#include <iostream>

#include "costmodel/htp_predictor.h"
#include "costmodel/hypotheses.h"
#include "support/error.h"

namespace layoutx::cli {

void PredictorOptions::add_to(CLI::App& app) {
  app.add_option("--device", device, "device whose calibrated cost model predicts")->capture_default_str();
}

std::unique_ptr<costmodel::Predictor> PredictorOptions::load() const {
  // The device's hypotheses, each calibrated, combined by weight (costmodel/hypotheses.h).
  if (device == costmodel::kDefaultDevice) return costmodel::load_default_hypothesis_predictor(std::cerr);
  throw Error("--device: no calibrated cost model for '" + device + "' (available: " +
              costmodel::kDefaultDevice + ")");
}

}  // namespace layoutx::cli
