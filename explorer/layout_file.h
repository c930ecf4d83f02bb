// The exporter's layout file: what `layoutx select --out` writes and export scripts read
// (schema documented in the README, "The layout file"). Plain YAML so a script can read it
// without layoutx.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "explorer/composition.h"
#include "explorer/model_layout_axes.h"
#include "explorer/selection.h"

namespace layoutx::explorer {

inline constexpr const char* kLayoutSchema = "layoutx-layout/1";

struct LayoutEntry {
  model::LayerType type = model::LayerType::kSliding;
  model::Variant variant;
  int cache_entries = 0;
  double predicted_ms = 0.0;
  double low_ms = 0.0, high_ms = 0.0;
  // Whether the variant is known to convert at the file's precision (costmodel::Compiles as
  // text: yes / unknown / contested). Written for the per-type defaults.
  std::string compiles = "yes";
};

// The whole-model layout (layoutx propose --out, issue 35): the model-level axes and the parts
// they make, for the exporter; absent from a per-type file (select --out). `step --layout-file`
// prices it back from the axes (the parts are written for the exporter and checked against them).
struct WholeModelRecord : ModelAxes {
  struct Part {
    std::string name;
    std::vector<int> layers;  // decoder layer indices, ascending
    bool embed = false, head = false;
    double weight_bytes = 0, predicted_ms = 0;
  };
  std::vector<Part> parts;
  double ms_per_token = 0, tokens_per_s = 0;  // as predicted when written
};

struct LayoutFile {
  std::string model;
  std::string device;
  std::string calibration_id;
  model::Precision precision = model::Precision::kFp16;
  int context = 0;
  std::map<model::LayerType, LayoutEntry> defaults;  // per layer type
  std::vector<LayoutEntry> layers;                   // one per layer index, in order
  double step_ms = 0.0;  // the layers (sum over layers)
  // The whole step (explorer/whole_step.h): layers + embedding + final norm + LM head.
  double whole_step_ms = 0.0, tokens_per_s = 0.0, lm_head_ms = 0.0, lm_head_share = 0.0;
  // The selection let candidates of unknown or contested conversion win (--allow-untested).
  bool allow_untested = false;
  // The model's activation: which axes apply to it (a SiLU model's entries spell no gelu axis).
  model::Activation activation = model::Activation::kGelu;
  std::optional<WholeModelRecord> whole_model;  // `model_layout:`, written by propose --out
};

// Builds the file's content from a model, its per-type choices and the context.
LayoutFile make_layout_file(Evaluator& ev, const model::ModelSpec& model, int ctx,
                            const Assignment& chosen, bool allow_untested = false);

void write_layout_file(const LayoutFile& f, const std::string& path);
std::string layout_file_yaml(const LayoutFile& f);
// Reads one back (e.g. for `layoutx emit --select`); validates like every config.
LayoutFile read_layout_file(const std::string& path);
// Same, from text; `name` stands for the file in messages (tests, the fuzz target).
LayoutFile read_layout_file_text(const std::string& text, const std::string& name);

// The model a layout file names: its spec beside the file (<dir>/<model>.yaml, else
// <dir>/<model>.json, an HF config.json: an exporter's layout ships with its model), else the shipped model of
// that name. Throws Error naming the layout file and where it looked.
model::ModelSpec layout_file_model(const LayoutFile& f, const std::string& path);

}  // namespace layoutx::explorer
