// layoutx measure: emits one layer variant, runs it in ONNX Runtime on this machine's CPU
// (warm-up, then timed runs, profiling on) and ingests the ORT profile into the database as
// device `onnxruntime-cpu`, with the run's details (wall times, threads, ORT version) as notes.
// --loop: the CPU loop (explorer/cpu_loop.h, run with emit/cpu_runner.h): measure, calibrate on a subset, predict the rest.
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "model/design_space.h"
#include "support/median.h"
#include "cli/layer_options.h"
#include "cli/flag_checks.h"
#include "cli/table.h"
#include "cli/output_flags.h"
#include "cli/json_flag.h"
#include "cli/verbs.h"
#include "db/dialect.h"
#include "db/ingest.h"
#include "db/ingest_checks.h"
#include "db/schema.h"
#include "costmodel/device_spec.h"
#include "emit/bundle.h"
#include "emit/cpu_runner.h"
#include "explorer/cpu_loop.h"
#include "emit/onnx_writer.h"
#include "emit/ort_runner.h"
#include "emit/weights.h"
#include "model/builder.h"
#include "model/numerics/fidelity.h"
#include "model/numerics/weights.h"
#include "model/limits.h"
#include "model/tensor_budget.h"
#include "support/atomic_file.h"
#include "support/error.h"
#include "support/json_writer.h"

namespace layoutx::cli {

namespace {

namespace fs = std::filesystem;

struct MeasureArgs {
  LayerOptions layer;
  std::string out = "out/measure";
  std::string db;
  emit::MeasureOptions run;
  uint64_t seed = 1;
  bool no_ingest = false;
  bool json = false;
  bool loop = false;
  int passes = 1;  // --loop: rounds over every point
  std::string device = "onnxruntime-cpu";
};

// Before the run: the database stores timings of shipped models only (ingest's rule,
// db/ingest_checks.h), so a timing of another model would be refused after minutes of runs.
void require_storable_model(const std::string& name) {
  const std::vector<std::string> known = db::known_model_names();
  if (std::find(known.begin(), known.end(), name) != known.end()) return;
  std::string list;
  for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
  throw Error("--model: the database stores timings of shipped models only and '" + name + "' is not one (known: " + list +
              "); give --no-ingest to time it without storing");
}

// --loop: measure a set of variants, calibrate on a subset, predict the rest (explorer/cpu_loop.h).
void run_loop(const MeasureArgs& a) {
  // 1. The model, the CPU's device spec, the points (calibration subset and held-out).
  auto r = a.layer.resolve();
  if (!a.no_ingest) require_storable_model(r.model.name);
  auto dev = costmodel::load_device_named(a.device);
  auto points = explorer::default_loop_points(a.layer.ctx);
  // 2. The database, then the device check: it must time layers as ONNX Runtime's profile does.
  std::unique_ptr<db::Connection> conn;
  if (!a.no_ingest) conn = db::open_database(a.db);
  emit::check_ort_device(dev);
  // 3. Measure all (emit's ORT runner, a folder per point), ingest, calibrate on the subset, predict all.
  const fs::path work = fs::path(a.out) / "loop";
  auto run = [&](const model::LayerSpec& layer, const model::Variant& v, size_t i) {
    auto res = emit::run_seeded_in_ort(layer, v, (work / ("point" + std::to_string(i))).string(), a.run);
    return explorer::PointRun{res.profile_path, res.runs_ms,
                              "onnxruntime-node " + res.ort_version + ", " + std::to_string(a.run.threads) + " thread(s)"};
  };
  auto rep = explorer::run_cpu_loop(a.layer.model, r.model, points, dev, run, conn.get(), a.passes);
  // 4. Print.
  if (a.json) {
    JsonWriter j(std::cout);
    j.begin_object();
    j.field("device", dev.name);
    j.field("calibration_id", rep.predictor_id);
    j.key("hypotheses").begin_array();
    for (const auto& h : rep.hypotheses) {
      j.begin_object();
      j.field("name", h.name);
      j.field("weight", h.weight);
      j.field("elpd", h.elpd);
      j.field("loo_median", h.loo_median);
      j.end_object();
    }
    j.end_array();
    j.field("op_shares", rep.shares);
    j.field("passes", rep.passes);
    j.field("held_out", rep.held_out);
    j.field("held_out_within_10pct", rep.held_out_within_10pct);
    j.key("rows").begin_array();
    for (const auto& row : rep.rows) {
      j.begin_object();
      j.field("layer", model::to_string(row.point.type));
      j.field("ctx", row.point.ctx);
      j.field("variant_key", row.point.variant.key());
      j.field("role", row.point.calibrate ? "calibration" : "held_out");
      j.field("measured_ms", row.measured_ms);
      j.field("wall_ms", row.wall_ms);
      j.field("pass_spread", row.spread);
      j.field("predicted_ms", row.predicted_ms);
      j.field("low_ms", row.low_ms);
      j.field("high_ms", row.high_ms);
      j.field("rel_error", row.rel_error);
      j.end_object();
    }
    j.end_array();
    j.end_object();
    return;
  }
  std::vector<std::string> head = {"layer", "ctx", "variant", "role", "measured ms", "predicted ms", "interval", "error"};
  if (rep.passes > 1) head.insert(head.begin() + 5, "pass spread");
  Table t(head);
  for (const auto& row : rep.rows) {
    std::vector<std::string> cells = {model::to_string(row.point.type), std::to_string(row.point.ctx),
                                      row.point.variant.key(), row.point.calibrate ? "calibration" : "held out",
                                      fmt(row.measured_ms, 3), fmt(row.predicted_ms, 3),
                                      fmt(row.low_ms, 3) + ".." + fmt(row.high_ms, 3), fmt(100 * row.rel_error, 1) + "%"};
    if (rep.passes > 1) cells.insert(cells.begin() + 5, fmt(100 * row.spread, 1) + "%");
    t.add(cells);
  }
  t.print(std::cout);
  if (!rep.hypotheses.empty()) {
    std::cout << "\nhypotheses of " << dev.name
              << ", each fitted on the calibration subset; predictions are their mixture:\n";
    Table h({"hypothesis", "weight", "elpd", "LOO median"});
    for (const auto& x : rep.hypotheses)
      h.add({x.name, fmt(x.weight, 3), fmt(x.elpd, 1), fmt(100 * x.loo_median, 1) + "%"});
    h.print(std::cout);
  }
  std::cout << "\ncalibration " << rep.predictor_id << " on " << (rep.rows.size() - rep.held_out)
            << " measured variants and " << rep.shares
            << " op shares of their profiles (base structure's leave-one-out median "
            << fmt(100 * rep.fit.calibration.loo_median, 1) << "%); held out " << rep.held_out << ": "
            << rep.held_out_within_10pct << " within +-10% ("
            << fmt(rep.held_out ? 100.0 * rep.held_out_within_10pct / rep.held_out : 0.0, 0) << "%)";
  if (rep.passes > 1) std::cout << "; each point's median of " << rep.passes << " passes";
  std::cout << "\n";
}

}  // namespace

void add_measure_verb(CLI::App& app) {
  auto a = std::make_shared<MeasureArgs>();
  auto* sub = app.add_subcommand("measure", "run a layer variant in ONNX Runtime (CPU) and ingest its profile");
  a->layer.add_to(*sub, model::limits::kMaxTensorContext);  // measure writes and runs the tensors
  sub->add_option("--out", a->out, "working directory for the model, inputs, outputs and profile")->capture_default_str();
  sub->add_option("--db", a->db, "database file (default: $XDG_DATA_HOME/layoutx/layoutx.db)")->check(output_database());
  sub->add_option("--runs", a->run.runs, "timed runs")->capture_default_str()->check(integer_in(1, 100000));
  sub->add_option("--warmup", a->run.warmup, "untimed runs first")->capture_default_str()->check(integer_in(0, 100000));
  sub->add_option("--threads", a->run.threads, "ONNX Runtime intra-op threads")->capture_default_str()->check(integer_in(1, 256));
  add_seed_option(*sub, a->seed, "the weights and inputs");
  sub->add_flag("--no-ingest", a->no_ingest, "leave the database alone (files only)");
  sub->add_flag("--loop", a->loop,
                "the CPU loop: measure a set of variants, calibrate on a subset, predict the held-out rest");
  auto* passes = sub->add_option("--passes", a->passes,
                                  "--loop: rounds over every point, each point's median pass kept (a slow spell of a "
                                  "shared machine then lands on every point once)")
                     ->capture_default_str()
                     ->check(integer_in(1, 100));
  sub->add_option("--device", a->device, "device spec of this CPU (a name under configs/devices/ or a .yaml): the database's device")
      ->capture_default_str();
  sub->callback([a, passes, sub] {
    a->json = json_requested(*sub);  // the one --json (cli/json_flag.h)
    if (passes->count() > 0 && !a->loop) throw Error("--passes: only with --loop (one variant is timed with --runs)");
    check_directory_target(a->out);  // before any work: a file or a read-only folder is an error
    if (a->loop) {
      run_loop(*a);
      return;
    }
    // 0. Before the run: a database that exists, or a PostgreSQL server, is opened now, so a file
    //    that is not a database or a server that refuses fails before minutes of ORT runs; a new
    //    SQLite file is created only when there is a profile to put in it (step 5).
    std::unique_ptr<db::Connection> conn;
    if (!a->no_ingest) {
      const std::string target = a->db.empty() ? db::default_db_path() : a->db;
      std::error_code ec;
      if (db::is_postgres_target(target) || fs::exists(target, ec)) conn = db::open_database(a->db);
    }
    // 1. The device (this CPU's spec), the variant and its graph.
    const auto dev = costmodel::load_device_named(a->device);
    emit::check_ort_device(dev);
    auto r = a->layer.resolve();
    if (!a->no_ingest) require_storable_model(r.model.name);
    model::check_tensor_budget(r.layer, "measure");
    auto g = model::build_layer_graph(r.layer, r.variant);
    // 2. Emit the ONNX (seeded weights), checked.
    auto w = model::numerics::seeded_weights(r.layer, a->seed);
    const std::string name = emit::bundle_name(g);
    const fs::path dir = fs::path(a->out) / name;
    ensure_directory(dir);
    auto m = emit::to_onnx(g, emit::LayerWeightsSource(w));
    emit::check_onnx(m, g);
    const std::string model_path = (dir / (name + ".onnx")).string();
    emit::write_onnx(m, model_path);
    // 3. Inputs: the first decode step of the runtime simulation (the op work does not depend on
    //    the values: no data-dependent shapes or branches in these graphs).
    auto io = model::numerics::step_io(r.layer, r.variant, w, 1, a->seed);
    emit::TensorMap inputs;
    for (const auto& [n, t] : io.at(0).inputs) inputs[n] = emit::Tensor{t.shape, t.data};
    // 4. Run: warm-up, then timed runs with profiling on.
    auto res = emit::ort_measure(model_path, inputs, dir.string(), a->run);
    const double wall = median(res.runs_ms);
    // 5. Ingest the ORT profile (timed runs only) as the device.
    std::optional<db::IngestResult> ing;
    if (!a->no_ingest && !res.profile_path.empty()) {
      if (!conn) conn = db::open_database(a->db);
      db::IngestContext ctx;
      ctx.device = dev.name;
      ctx.variant = g.variant.key(model::AxisScope(g.layer));
      ctx.layer = model::to_string(g.layer.type);
      ctx.ctx = g.layer.context;
      ctx.model = r.model.name;
      ctx.format = db::Format::kOrtJson;
      ctx.notes = "layoutx measure: onnxruntime-node " + res.ort_version + ", CPU EP, " +
                  std::to_string(a->run.threads) + " intra-op thread(s), " + std::to_string(a->run.warmup) +
                  " warm-up + " + std::to_string(a->run.runs) + " timed runs; session.run wall median " +
                  fmt(wall, 4) + " ms; profile: " + res.profile_path;
      ing = db::ingest_file(*conn, res.profile_path, ctx);
    }
    // 6. Print.
    if (a->json) {
      JsonWriter j(std::cout);
      j.begin_object();
      j.field("device", dev.name);
      j.field("variant_key", g.variant.key(model::AxisScope(g.layer)));
      j.field("layer", model::to_string(g.layer.type));
      j.field("ctx", g.layer.context);
      j.field("onnxruntime", res.ort_version);
      j.field("threads", a->run.threads);
      j.field("warmup_ms", res.warmup_ms);
      j.field("runs_ms", res.runs_ms);
      j.field("wall_median_ms", wall);
      j.field("model", model_path);
      j.field("profile", res.profile_path);
      j.field("timings", res.timings_path);
      if (ing) {
        j.key("ingest").begin_object();
        j.field("run_id", ing->run_id);
        j.field("skipped", ing->skipped);
        j.field("layers", static_cast<int64_t>(ing->layers));
        j.field("ops", static_cast<int64_t>(ing->ops));
        j.end_object();
      }
      j.end_object();
      return;
    }
    std::cout << "variant   " << g.variant.key(model::AxisScope(g.layer)) << "\nlayer     " << model::to_string(g.layer.type) << ", ctx "
              << g.layer.context << "\nruntime   onnxruntime-node " << res.ort_version << " (CPU EP, " << a->run.threads
              << " thread(s))\nwall      median " << fmt(wall, 4) << " ms over " << res.runs_ms.size()
              << " runs (min " << fmt(*std::min_element(res.runs_ms.begin(), res.runs_ms.end()), 4) << ", max "
              << fmt(*std::max_element(res.runs_ms.begin(), res.runs_ms.end()), 4) << "), after " << res.warmup_ms.size()
              << " warm-up\nfiles     " << model_path << "\n          " << res.profile_path << "\n          "
              << res.timings_path << "\n";
    if (ing)
      std::cout << "database  run " << ing->run_id << (ing->skipped ? " (same profile ingested before)" : "") << ": "
                << ing->layers << " layer record(s), " << ing->ops << " op records, device " << dev.name << "\n";
    else
      std::cout << "database  not touched\n";
  });
}

}  // namespace layoutx::cli
