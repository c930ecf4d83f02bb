#include "cli/emit_parts.h"

#include <iostream>

#include "cli/bundle_json.h"
#include "cli/table.h"
#include "emit/part.h"
#include "explorer/layout_file.h"
#include "explorer/model_layout.h"
#include "model/limits.h"
#include "model/model_loader.h"
#include "model/numerics/weights.h"
#include "model/tensor_budget.h"
#include "support/error.h"
#include "support/json_writer.h"

namespace layoutx::cli {

namespace fs = std::filesystem;

namespace {

std::string range(const std::vector<int>& layers) {
  return layers.size() == 1 ? std::to_string(layers.front())
                            : std::to_string(layers.front()) + "-" + std::to_string(layers.back());
}

using PartRecord = explorer::WholeModelRecord::Part;

// The file's parts that hold layers (--part NAME: that one alone). The others, and the embedding
// and head inside layer parts, go to `not_emitted` (cleared with --part). Throws Error when
// --part names no part.
std::vector<const PartRecord*> parts_to_emit(const explorer::LayoutFile& f, const PartsRequest& r,
                                             std::vector<std::string>& not_emitted) {
  std::vector<const PartRecord*> records;
  for (const auto& p : f.whole_model->parts) {
    if (p.layers.empty())
      not_emitted.push_back(p.name);
    else
      records.push_back(&p);
    if (!p.layers.empty() && p.embed) not_emitted.push_back("the embedding gather of " + p.name);
    if (!p.layers.empty() && p.head) not_emitted.push_back("the final norm and LM head of " + p.name);
  }
  if (!r.only.empty()) {
    std::string names;
    for (const auto* p : records) {
      names += (names.empty() ? "" : ", ") + emit::part_name(p->layers);
      if (emit::part_name(p->layers) == r.only) records = {p};
    }
    if (records.size() != 1 || emit::part_name(records[0]->layers) != r.only)
      throw Error("--part " + r.only + ": " + r.layout_file + " has no such part (its parts: " + names + ")");
    not_emitted.clear();
  }
  return records;
}

// Sizes every part (its graphs without weights) before anything is written: each layer within
// the tensor budget, the bundles within the cap. Weights over the cap name the parts, so that one
// can be emitted at a time.
void check_part_sizes(const std::vector<const PartRecord*>& records, const model::ModelSpec& m, int context,
                      const explorer::ModelLayout& layout, const PartsRequest& r) {
  std::vector<emit::BundleSize> sizes;
  for (const auto* p : records) {
    const emit::Part shape = emit::model_part(m, context, p->layers, layout.layers, nullptr);
    for (const auto& l : shape.layers) model::check_tensor_budget(l.graph->layer, "emit --parts");
    sizes.push_back(emit::part_bundle_size(shape, r.calibration));
  }
  int64_t float_weights = 0;
  size_t largest = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    float_weights += sizes[i].onnx;
    if (sizes[i].onnx > sizes[largest].onnx) largest = i;
  }
  if (sizes.size() > 1 && float_weights > emit::kMaxBundleBytes)
    throw Error(r.layout_file + ": its parts' float32 weights take " + fmt(static_cast<double>(float_weights) / 1e9, 2) +
                " GB, above emit's cap of " + fmt(static_cast<double>(emit::kMaxBundleBytes) / 1e9, 2) +
                " GB (README, \"Limits\"): emit one part at a time with --part NAME (the largest, " +
                emit::part_name(records[largest]->layers) + ", takes " +
                fmt(static_cast<double>(sizes[largest].onnx) / 1e9, 2) + " GB)");
  emit::check_bundle_sizes(sizes, "--calibration-samples");
}

// Writes one built part's bundle in root/<part name>/ and, with r.validate, runs it in ONNX
// Runtime against the executor (in a scratch folder removed afterwards).
EmittedPart write_part(const emit::Part& part, const PartRecord& p, int context, const PartsRequest& r,
                       const emit::BundleOptions& opt, const fs::path& root) {
  EmittedPart e;
  e.name = part.name;
  e.layers = p.layers;
  e.ctx = context;
  e.predicted_ms = p.predicted_ms;
  const std::string hint = "not ingested yet (layoutx ingest takes one layer's profile): compare the part's total with "
                           "its prediction, " + std::to_string(p.predicted_ms) + " ms an execute (" + r.layout_file + ")";
  const fs::path dir = root / part.name;
  e.files = emit::write_part_bundle(part, dir.string(), opt, hint);
  if (r.validate > 0) {
    const fs::path scratch = dir / "ort_validation";
    e.validation = emit::validate_part_in_ort(part, r.validate, r.seed, scratch.string());
    std::error_code ec;
    fs::remove_all(scratch, ec);  // a second copy of the model and per-step tensors: not part of the bundle
  }
  return e;
}

}  // namespace

EmittedParts emit_parts(const PartsRequest& r, const emit::BundleOptions& target, const fs::path& root) {
  const auto f = explorer::read_layout_file(r.layout_file);
  if (f.context > model::limits::kMaxTensorContext)  // emit writes caches of the context's size
    throw Error(r.layout_file + ": context: emit takes at most " + std::to_string(model::limits::kMaxTensorContext) +
                " tokens, got " + std::to_string(f.context));
  const model::ModelSpec m = r.model.name == f.model ? r.model : explorer::layout_file_model(f, r.layout_file);
  const explorer::ModelLayout layout = explorer::model_layout_of(f, m, r.layout_file);
  EmittedParts out;
  out.model = m.name;
  out.layout_file = r.layout_file;
  const WeightsFlags& wf = *r.weights;
  out.weights_description = wf.weights.empty() ? "seeded: " + std::to_string(r.seed) + " + layer index"
                                                : "safetensors: " + wf.weights + ", each part's own layers";
  auto weights = [&](int index, const model::LayerSpec& L) {
    if (wf.weights.empty()) return model::numerics::seeded_weights(L, r.seed + static_cast<uint64_t>(index));
    WeightsFlags::Source s = wf.resolve(m, L.type);
    s.layer_index = index;
    return WeightsFlags::load(s, L);
  };
  // 1. The parts that hold layers, sized before anything is written.
  const std::vector<const PartRecord*> records = parts_to_emit(f, r, out.not_emitted);
  check_part_sizes(records, m, f.context, layout, r);
  // 2. Each part built with its weights, written, optionally validated, then dropped.
  emit::BundleOptions opt = target;
  opt.model_name = m.name;
  opt.weights_description = out.weights_description;
  opt.seed = r.seed;
  opt.calibration_samples = r.calibration;
  for (const auto* p : records)
    out.parts.push_back(write_part(emit::model_part(m, f.context, p->layers, layout.layers, weights), *p, f.context, r,
                                   opt, root));
  return out;
}

void print_parts(const EmittedParts& e, bool json) {
  if (json) {
    JsonWriter w(std::cout);
    w.begin_object();
    w.field("model", e.model);
    w.field("layout_file", e.layout_file);
    w.field("weights", e.weights_description);
    w.key("parts").begin_array();
    for (const auto& p : e.parts) {
      w.begin_object();
      w.field("name", p.name);
      w.key("layers").begin_array();
      for (int i : p.layers) w.value(i);
      w.end_array();
      w.field("ctx", p.ctx);
      w.field("predicted_ms", p.predicted_ms);
      write_bundle_files(w, p.files);
      w.field("checker", "ok");
      if (p.validation) write_validation(w, *p.validation);
      w.end_object();
    }
    w.end_array();
    w.key("not_emitted").begin_array();
    for (const auto& n : e.not_emitted) w.value(n);
    w.end_array();
    w.end_object();
    return;
  }
  Table t({"part", "layers", "ctx", "predicted ms", "onnx", "checker", "ORT steps", "SNR dB", "K/V SNR dB"});
  for (const auto& p : e.parts) {
    const auto& v = p.validation;
    t.add({p.name, range(p.layers), std::to_string(p.ctx), fmt(p.predicted_ms, 3), p.files.onnx, "ok",
           v ? std::to_string(v->steps) : "-", v ? fmt(v->hidden.snr_db, 1) : "-", v ? fmt(v->kv_snr_db, 1) : "-"});
  }
  t.print(std::cout);
  std::cout << "\n" << e.parts.size() << " part" << (e.parts.size() == 1 ? "" : "s") << " of " << e.model << " from "
            << e.layout_file << ", each one graph (its layers' hidden state inside) with job.yaml, submit_aihub.py, "
               "qnn_sdk.sh and calibration/; weights "
            << e.weights_description << "\n";
  if (!e.not_emitted.empty()) {
    std::cout << "not emitted (no layer graphs in layoutx):";
    for (size_t i = 0; i < e.not_emitted.size(); ++i) std::cout << (i ? ", " : " ") << e.not_emitted[i];
    std::cout << "\n";
  }
}

}  // namespace layoutx::cli
