#include "emit/plan_bundles.h"

#include <cctype>
#include <cstdio>
#include <sstream>

#include "explorer/plan_file.h"
#include "model/builder.h"
#include "model/numerics/weights.h"
#include "support/atomic_file.h"

namespace layoutx::emit {

namespace fs = std::filesystem;
using explorer::PlannedMeasurement;

namespace {

// "01-timing-full-ring_kv_dtype_u8": rank, kind, layer type and the variant's name, file-safe.
std::string slug(const PlanBundleEntry& e, size_t rank) {
  char n[24];
  std::snprintf(n, sizeof n, "%02zu", rank + 1);
  std::string name = e.name;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return std::string(n) + "-" + to_string(e.measurement->kind) + "-" + model::to_string(e.measurement->layer.type) +
         "-" + name;
}

}  // namespace

std::vector<WrittenBundle> write_plan_bundles(const fs::path& folder, const std::vector<PlanBundleEntry>& entries,
                                              const model::ModelSpec& m, const std::string& device,
                                              const std::string& calibration_id, const BundleOptions& target,
                                              uint64_t seed) {
  std::vector<WrittenBundle> done;
  // What the bundles take on disk: above the cap, nothing is written.
  std::vector<BundleSize> sizes;
  for (const auto& e : entries)
    sizes.push_back(bundle_size(model::build_layer_graph(e.measurement->layer, e.measurement->variant),
                                target.calibration_samples));
  check_bundle_sizes(sizes, "");
  std::ostringstream submit;
  explorer::PlanFile plan{m.name, device, calibration_id, {}};
  submit << "#!/usr/bin/env bash\n# Submits every job of plan.yaml through Qualcomm AI Hub (needs qai_hub and an account).\n"
         << "# After each, run the line plan.yaml gives under `ingest`.\nset -euo pipefail\ncd \"$(dirname \"$0\")\"\n";
  for (size_t i = 0; i < entries.size(); ++i) {
    const PlannedMeasurement& t = *entries[i].measurement;
    WrittenBundle w;
    w.dir = slug(entries[i], i);
    const model::LayerGraph g = model::build_layer_graph(t.layer, t.variant);
    BundleOptions opt = target;
    opt.model_name = m.name;
    opt.seed = seed;
    opt.weights_description = "seeded: " + std::to_string(seed);
    write_bundle(g, model::numerics::seeded_weights(t.layer, seed), (folder / w.dir).string(), opt);
    // A timing and an op-level profile run the same profile job: AI Hub's profile JSON carries the
    // per-op execution_detail, and `ingest` stores its op rows beside the layer time.
    const bool profile = t.kind != PlannedMeasurement::Kind::kCompileOnly;
    w.submit = "python3 " + w.dir + "/submit_aihub.py" + (profile ? "" : " --compile-only");
    w.ingest = profile ? "cd " + w.dir + " && " + ingest_command(g, opt, "profile_aihub.json")
                       : "add the outcome (ok, or fail with the converter's exit code) as a record of the form to "
                         "configs/rules/qnn-htp.yaml";
    submit << "echo '== " << w.dir << "'\n" << w.submit << "\n";
    plan.measurements.push_back({&t, entries[i].settles, w.dir, w.submit, w.ingest});
    done.push_back(std::move(w));
  }
  write_file_atomically(folder / "plan.yaml", explorer::plan_file_yaml(plan));
  write_file_atomically(folder / "submit_all.sh", submit.str());
  fs::permissions(folder / "submit_all.sh", fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                  fs::perm_options::add);
  return done;
}

}  // namespace layoutx::emit
