// emit --parts: every part of a whole-model layout file (propose --out writes one) as one graph,
// with its device job bundle, optionally run in ONNX Runtime against the executor.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cli/weights_flags.h"
#include "emit/bundle.h"
#include "emit/validate.h"
#include "model/model_spec.h"

namespace layoutx::cli {

struct PartsRequest {
  std::string layout_file;  // --select
  model::ModelSpec model;   // --model as loaded (the file's model is used when it names another)
  const WeightsFlags* weights = nullptr;
  uint64_t seed = 1;
  int calibration = 8;
  int validate = 0;         // ORT vs executor steps; 0: none
  std::string only;         // --part NAME: that part alone ("" : every part)
};

struct EmittedPart {
  std::string name;
  std::vector<int> layers;
  int ctx = 0;
  double predicted_ms = 0;  // the layout file's prediction of one execute of the part
  emit::BundleFiles files;
  std::optional<emit::Validation> validation;
};

struct EmittedParts {
  std::string model, layout_file, weights_description;
  std::vector<EmittedPart> parts;
  std::vector<std::string> not_emitted;  // the file's parts that are no layer graphs (embedding, head)
};

// Writes each part's bundle in root/<part name>/ (root: the staging folder). Sizes are checked
// against the cap before anything is written. Throws Error naming the file or flag.
EmittedParts emit_parts(const PartsRequest& r, const emit::BundleOptions& target, const std::filesystem::path& root);

void print_parts(const EmittedParts& e, bool json);

}  // namespace layoutx::cli
