// layoutx emit: the ONNX of one layer variant (or, with --select, of every layer type's chosen
// variant in a layout file) plus the device job bundle beside it; --validate N also runs it in
// ONNX Runtime over N decode steps and compares with the reference executor.
#include <optional>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "cli/bundle_json.h"
#include "cli/emit_parts.h"
#include "cli/flag_checks.h"
#include "cli/layer_options.h"
#include "cli/output_flags.h"
#include "model/limits.h"
#include "model/tensor_budget.h"
#include "cli/table.h"
#include "cli/json_flag.h"
#include "cli/verbs.h"
#include "cli/weights_flags.h"
#include "costmodel/device_spec.h"
#include "emit/bundle.h"
#include "emit/ort_runner.h"
#include "emit/validate.h"
#include "explorer/design_space.h"
#include "explorer/layout_file.h"
#include "model/builder.h"
#include "model/model_loader.h"
#include "model/numerics/safetensors.h"
#include "model/numerics/weights.h"
#include "support/atomic_file.h"
#include "support/error.h"
#include "support/json_writer.h"
#include "support/paths.h"

namespace layoutx::cli {

namespace {

namespace fs = std::filesystem;
namespace num = model::numerics;

struct EmitArgs {
  LayerOptions layer;
  std::string device = costmodel::kDefaultDevice;  // --device NAME|PATH: the bundle's target
  std::string out;
  bool force = false;  // --force: replace a non-empty --out folder
  std::string select;
  uint64_t seed = 1;
  WeightsFlags weights;     // --weights, --weight-map, --layer-index (default: seeded weights)
  int calibration = 8;
  int validate = 0;         // ORT vs executor steps; 0: no validation
  bool sweep = false;       // validate every meaningful variant of the layer type, no bundles
  bool parts = false;       // --parts: the --select file's parts (a whole-model layout), a bundle each
  std::string part;         // --part NAME: one of them
  bool json = false;
};

struct Job {
  model::ModelSpec model;
  model::LayerSpec layer;
  model::Variant variant;
  std::string dir;
};

struct Emitted {
  Job job;
  emit::BundleFiles files;
  std::string weights_description;
  std::optional<emit::Validation> validation;
};

// Seeded weights, or the layer's tensors from a safetensors checkpoint.
num::LayerWeights load_weights(const EmitArgs& a, const Job& j, std::string& description) {
  if (a.weights.weights.empty()) {
    description = "seeded: " + std::to_string(a.seed);
    return num::seeded_weights(j.layer, a.seed);
  }
  const WeightsFlags::Source from = a.weights.resolve(j.model, j.layer.type);
  description = "safetensors: " + from.checkpoint + ", layer " + std::to_string(from.layer_index) + " (map " +
                from.map_path + ")";
  return WeightsFlags::load(from, j.layer);
}

// A layout file edited by hand (or written for another model) may disagree with the model it
// names: each entry's cache_entries must be what the model caches at the file's context, and
// the per-layer list must follow the model's layer types. Throws Error naming the entry.
void check_layout_against_model(const explorer::LayoutFile& f, const model::ModelSpec& m, const std::string& file) {
  ErrorList errors;
  auto check = [&](const std::string& where, const explorer::LayoutEntry& e) {
    if (m.count(e.type) == 0) {
      errors.add(file + ": " + where + ": " + m.name + " has no " + model::to_string(e.type) + " layers");
      return;
    }
    const int want = m.layer(e.type, f.context).cache_entries;
    if (e.cache_entries != want)
      errors.add(file + ": " + where + ".cache_entries: " + std::to_string(e.cache_entries) + " disagrees with " +
                 m.name + " at context " + std::to_string(f.context) + " (" + std::to_string(want) + ")");
  };
  for (const auto& [type, entry] : f.defaults) check(std::string("defaults.") + model::to_string(type), entry);
  if (!f.layers.empty() && static_cast<int>(f.layers.size()) != m.num_layers())
    errors.add(file + ": layers: " + std::to_string(f.layers.size()) + " entries, but " + m.name + " has " +
               std::to_string(m.num_layers()) + " layers");
  for (size_t i = 0; i < f.layers.size() && static_cast<int>(i) < m.num_layers(); ++i) {
    if (f.layers[i].type != m.layer_types[i])
      errors.add(file + ": layers[" + std::to_string(i) + "].type: " + model::to_string(f.layers[i].type) + ", but layer " +
                 std::to_string(i) + " of " + m.name + " is " + model::to_string(m.layer_types[i]));
    else
      check("layers[" + std::to_string(i) + "]", f.layers[i]);
  }
  errors.throw_if_any();
}

// The bundles to write, each in its folder under `root` (the staging folder of --out).
std::vector<Job> jobs_of(const EmitArgs& a, const fs::path& root) {
  std::vector<Job> jobs;
  if (a.select.empty()) {
    auto r = a.layer.resolve();
    model::check_tensor_budget(r.layer, "emit");
    jobs.push_back({r.model, r.layer, r.variant, root.string()});
    return jobs;
  }
  // Every layer type's chosen variant, at the layout's context and precision; --layer narrows it
  // to one type. The layout file gives the variant, context and precision: flags that would
  // give them too are refused rather than ignored.
  for (const char* flag : {"--ctx", "--layout", "--set", "--precision"})
    if (a.layer.given(flag))
      throw Error(std::string(flag) + ": --select " + a.select + " gives the layout's own " + (flag + 2) +
                  "; drop " + flag + " (or emit one variant with --layer/--layout without --select)");
  auto f = explorer::read_layout_file(a.select);
  if (f.context > model::limits::kMaxTensorContext)  // emit writes caches of the context's size
    throw Error(a.select + ": context: emit takes at most " + std::to_string(model::limits::kMaxTensorContext) +
                " tokens, got " + std::to_string(f.context));
  // The layout names its model: --model's spec when it is that model, else the spec beside the
  // file or the shipped one (explorer::layout_file_model, as step --layout-file and --parts find it).
  model::ModelSpec given = model::load_model(a.layer.model);
  auto m = given.name == f.model ? given : explorer::layout_file_model(f, a.select);
  check_layout_against_model(f, m, a.select);
  std::optional<model::LayerType> only;
  if (a.layer.given("--layer")) {
    only = model::parse_layer_type(a.layer.layer, "--layer");
    if (!f.defaults.count(*only))
      throw Error("--layer " + a.layer.layer + ": " + a.select + " has no " + a.layer.layer + " layers to emit");
  }
  for (const auto& [type, entry] : f.defaults)
    if (!only || type == *only)
      jobs.push_back({m, m.layer(type, f.context), entry.variant, (root / model::to_string(type)).string()});
  if (jobs.empty()) throw Error(a.select + ": the layout has no per-type defaults to emit");
  for (const auto& j : jobs) model::check_tensor_budget(j.layer, "emit");
  return jobs;
}

// `p` under `from` (the staging folder), as the same path under `to` (--out).
std::string rebased(const std::string& p, const fs::path& from, const fs::path& to) {
  const fs::path rel = fs::path(p).lexically_relative(from);
  return rel == "." ? to.string() : (to / rel).string();
}

void rebase(emit::BundleFiles& f, const fs::path& from, const fs::path& to) {
  for (std::string* p : {&f.dir, &f.onnx, &f.job, &f.aihub_script, &f.qnn_script}) *p = rebased(*p, from, to);
  for (auto& c : f.calibration) c = rebased(c, from, to);
}

std::string fmt_db(double x) {
  if (std::isinf(x)) return "inf";
  return fmt(x, 1);
}

void print(const std::vector<Emitted>& done, bool json) {
  if (json) {
    JsonWriter w(std::cout);
    w.begin_object();
    w.key("bundles").begin_array();
    for (const auto& e : done) {
      w.begin_object();
      w.field("layer", model::to_string(e.job.layer.type));
      w.field("ctx", e.job.layer.context);
      w.field("variant_key", e.job.variant.key(model::AxisScope(e.job.layer)));
      write_bundle_files(w, e.files);
      w.field("weights", e.weights_description);
      w.field("checker", "ok");
      if (e.validation) write_validation(w, *e.validation);
      w.end_object();
    }
    w.end_array();
    w.end_object();
    return;
  }
  Table t({"layer", "ctx", "variant", "onnx", "checker", "ORT steps", "SNR dB", "K/V SNR dB", "max |err|"});
  for (const auto& e : done) {
    const auto& v = e.validation;
    t.add({model::to_string(e.job.layer.type), std::to_string(e.job.layer.context), e.job.variant.key(model::AxisScope(e.job.layer)), e.files.onnx,
           "ok", v ? std::to_string(v->steps) : "-", v ? fmt_db(v->hidden.snr_db) : "-",
           v ? fmt_db(v->kv_snr_db) : "-", v ? fmt(v->hidden.max_abs_err, 6) : "-"});
  }
  t.print(std::cout);
  for (const auto& e : done) {
    std::cout << "\n" << e.files.dir << ": " << fs::path(e.files.onnx).filename().string()
              << ", job.yaml, submit_aihub.py, qnn_sdk.sh, calibration/ (" << e.files.calibration.size()
              << " samples); weights " << e.weights_description << "\n";
  }
}

// --sweep: every meaningful variant of the layer type emitted, checked, run in ORT over
// --validate steps and compared with the executor; one row each and the worst SNR.
void sweep(const EmitArgs& a, const fs::path& scratch_root) {
  auto r = a.layer.resolve();
  model::check_tensor_budget(r.layer, "emit --sweep");
  const int steps = a.validate > 0 ? a.validate : 4;
  auto w = num::seeded_weights(r.layer, a.seed);
  struct Row {
    model::Variant v;
    emit::Validation val;
  };
  std::vector<Row> rows;
  for (const auto& v : explorer::meaningful_variants(r.variant.precision(), model::AxisScope(r.layer))) {
    // 1. Build, emit (checker + shape inference inside), run in ORT, compare.
    auto g = model::build_layer_graph(r.layer, v);
    const auto scratch = scratch_root / "sweep";
    rows.push_back({v, emit::validate_in_ort(g, w, steps, a.seed, scratch.string())});
    std::error_code ec;  // scratch only: a failed removal is not an error of the sweep
    fs::remove_all(scratch, ec);
    if (!a.json)
      std::cerr << "sweep: " << rows.size() << " " << v.key() << " " << fmt_db(rows.back().val.hidden.snr_db) << " dB\n";
  }
  auto worst = std::min_element(rows.begin(), rows.end(), [](const Row& x, const Row& y) {
    return x.val.hidden.snr_db < y.val.hidden.snr_db;
  });
  if (a.json) {
    JsonWriter j(std::cout);
    j.begin_object();
    j.field("model", r.model.name);
    j.field("layer", model::to_string(r.layer.type));
    j.field("ctx", r.layer.context);
    j.field("steps", steps);
    j.field("variants", static_cast<int64_t>(rows.size()));
    j.field("checker", "ok");
    j.key("rows").begin_array();
    for (const auto& row : rows) {
      j.begin_object();
      j.field("variant_key", row.v.key());
      j.field("snr_db", row.val.hidden.snr_db);
      j.field("delta_snr_db", row.val.hidden.delta_snr_db);
      j.field("kv_snr_db", row.val.kv_snr_db);
      j.field("max_abs_err", row.val.hidden.max_abs_err);
      j.end_object();
    }
    j.end_array();
    if (worst != rows.end()) {
      j.field("worst_variant", worst->v.key());
      j.field("worst_snr_db", worst->val.hidden.snr_db);
    }
    j.end_object();
    return;
  }
  Table t({"variant", "checker", "SNR dB", "update SNR dB", "K/V SNR dB", "max |err|"});
  for (const auto& row : rows)
    t.add({row.v.key(), "ok", fmt_db(row.val.hidden.snr_db), fmt_db(row.val.hidden.delta_snr_db),
           fmt_db(row.val.kv_snr_db), fmt(row.val.hidden.max_abs_err, 7)});
  t.print(std::cout);
  if (worst != rows.end())
    std::cout << "\n" << rows.size() << " variants of " << r.model.name << " " << model::to_string(r.layer.type)
              << " (ctx " << r.layer.context << ") emitted, checked, run in ONNX Runtime over " << steps
              << " steps; worst SNR vs the executor " << fmt_db(worst->val.hidden.snr_db) << " dB ("
              << worst->v.key() << ")\n";
}

// The flags; --layer, --ctx, --layout etc. from LayerOptions.
void add_emit_flags(CLI::App& sub, EmitArgs& a) {
  a.layer.add_to(sub, model::limits::kMaxTensorContext);  // emit writes the tensors
  sub.add_option("--out", a.out, "output folder (a new or empty one; written whole, or not at all)")
      ->required()
      ->check(output_folder());
  add_force_flag(sub, a.force, "--out");
  sub.add_option("--select", a.select, "a layout file (layoutx select): emit every layer type's chosen variant");
  sub.add_option("--device", a.device, "the bundle's target: a device name under configs/devices/ or a device .yaml")
      ->capture_default_str();
  add_seed_option(sub, a.seed, "the generated weights and calibration inputs");
  a.weights.add_to(sub);
  sub.add_option("--calibration-samples", a.calibration, "decode steps saved as calibration inputs")
      ->capture_default_str()
      ->check(integer_in(1, 4096));
  sub.add_option("--validate", a.validate, "run N steps in ONNX Runtime and compare with the executor")
      ->check(integer_in(0, 100000));
  sub.add_flag("--parts", a.parts,
               "with --select of a whole-model layout (propose --out): each part's layers as one graph, a bundle "
               "each");
  sub.add_option("--part", a.part, "with --parts: that part alone (layers_<first>_<last>, as --parts names them)");
  sub.add_flag("--sweep", a.sweep,
               "validate every meaningful variant of the layer type (at --precision) in ONNX Runtime; no bundles");
}

// Flags that need another, or that --parts makes meaningless, refused before any work.
void check_flag_combinations(const EmitArgs& a, const CLI::App& sub) {
  a.weights.check();
  if (!a.part.empty() && !a.parts) throw Error("--part " + a.part + ": needs --parts");
  if (!a.parts) return;
  if (a.select.empty()) throw Error("--parts: give the whole-model layout with --select FILE (propose --out writes one)");
  for (const char* flag : {"--layer", "--layer-index", "--sweep", "--ctx", "--layout", "--set", "--precision"})
    if (sub.count(flag) > 0)
      throw Error(std::string("--parts: ") + flag + " does not apply: the layout file gives every part's layers, "
                  "their layouts and the context");
}

// --parts: each part of the --select file as one graph with its bundle (cli/emit_parts.h), published, printed.
void emit_and_print_parts(const EmitArgs& a, const emit::BundleOptions& target, StagedFolder& folder) {
  PartsRequest r{a.select, model::load_model(a.layer.model), &a.weights, a.seed, a.calibration, a.validate, a.part};
  EmittedParts e = emit_parts(r, target, folder.path());
  folder.publish();
  for (auto& p : e.parts) rebase(p.files, folder.path(), a.out);
  print_parts(e, a.json);
}

// Writes each job's bundle (sizes checked against the cap first) and, with --validate, runs it in
// ONNX Runtime over a history against the executor.
std::vector<Emitted> emit_jobs(const EmitArgs& a, const std::vector<Job>& jobs, const emit::BundleOptions& target) {
  // 1. What they take on disk: above the cap (emit/bundle.h) refused before anything is written.
  std::vector<emit::BundleSize> sizes;
  for (const auto& job : jobs)
    sizes.push_back(emit::bundle_size(model::build_layer_graph(job.layer, job.variant), a.calibration));
  emit::check_bundle_sizes(sizes, "--calibration-samples");
  std::vector<Emitted> done;
  for (const auto& job : jobs) {
    Emitted e{job, {}, {}, std::nullopt};
    // 2. Build the graph and get its weights.
    auto g = model::build_layer_graph(job.layer, job.variant);
    auto w = load_weights(a, job, e.weights_description);
    // 3. Write the ONNX (checker + shape inference) and the bundle.
    emit::BundleOptions opt = target;
    opt.model_name = job.model.name;
    opt.weights_description = e.weights_description;
    opt.seed = a.seed;
    opt.calibration_samples = a.calibration;
    e.files = emit::write_bundle(g, w, job.dir, opt);
    // 4. Optionally run it in ONNX Runtime over a history and compare with the executor.
    if (a.validate > 0) {
      const auto scratch = fs::path(job.dir) / "ort_validation";
      e.validation = emit::validate_in_ort(g, w, a.validate, a.seed, scratch.string());
      std::error_code ec;
      fs::remove_all(scratch, ec);  // a second copy of the model and per-step tensors: not part of the bundle
    }
    done.push_back(std::move(e));
  }
  return done;
}

}  // namespace

void add_emit_verb(CLI::App& app) {
  auto a = std::make_shared<EmitArgs>();
  auto* sub = app.add_subcommand("emit", "write the ONNX of a layer variant and its device job bundle");
  add_emit_flags(*sub, *a);
  sub->callback([a, sub] {
    a->json = json_requested(*sub);  // the one --json (cli/json_flag.h)
    check_flag_combinations(*a, *sub);  // before any work
    // Before any work: the folder is staged beside --out and renamed into place when complete.
    // --sweep keeps nothing: its staging folder is scratch, never published.
    StagedFolder folder(a->out, a->force || a->sweep, "--out");
    if (a->sweep) {
      sweep(*a, folder.path());
      return;
    }
    // 0. The target device (its identity: AI Hub name, HTP arch, VTCM) before any work.
    const emit::BundleOptions target = emit::device_bundle_options(costmodel::load_device_named(a->device));
    if (a->parts) {
      emit_and_print_parts(*a, target, folder);
      return;
    }
    // 1. Which variants: the flags' one, or each layer type's default in the layout file.
    const std::vector<Job> jobs = jobs_of(*a, folder.path());
    // 2. Their bundles, written (and validated) in the staging folder.
    std::vector<Emitted> done = emit_jobs(*a, jobs, target);
    // 3. Publish the folder whole, and name its files where they now are.
    folder.publish();
    for (auto& e : done) rebase(e.files, folder.path(), a->out);
    // 4. Print.
    print(done, a->json);
  });
}

}  // namespace layoutx::cli
