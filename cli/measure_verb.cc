// layoutx measure: emits one layer variant, runs it in ONNX Runtime on this machine's CPU
// (warm-up, then timed runs, profiling on) and ingests the ORT profile into the database as
// device `onnxruntime-cpu`, with the run's details (wall times, threads, ORT version) as notes.
// --loop: the CPU loop (explorer/cpu_loop.h, run with emit/cpu_runner.h): measure, calibrate on a subset, predict the rest.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>

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
#include "emit/cpu_measure.h"
#include "emit/cpu_runner.h"
#include "explorer/cpu_loop.h"
#include "emit/ort_runner.h"
#include "model/builder.h"
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

void print_loop_json(const costmodel::DeviceSpec& dev, const explorer::LoopReport& rep) {
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
}

// A row per point (a pass-spread column with several passes), the hypotheses, then the summary.
void print_loop_text(const costmodel::DeviceSpec& dev, const explorer::LoopReport& rep) {
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
  if (a.json) print_loop_json(dev, rep);
  else print_loop_text(dev, rep);
}

// What one run of one variant gave: its graph, the ONNX and ORT's files, and what the database took.
struct OneRun {
  model::LayerGraph graph;
  emit::CpuMeasurement measured;
  double wall_ms = 0;  // median session.run wall time
  std::optional<db::IngestResult> ingested;  // none with --no-ingest or when ORT wrote no profile
};

// Before the run: a database that exists, or a PostgreSQL server, is opened now, so a file that is
// not a database or a server that refuses fails before minutes of ORT runs; a new SQLite file is
// created only when there is a profile to put in it (ingest_profile). Null with --no-ingest.
std::unique_ptr<db::Connection> open_existing_target(const MeasureArgs& a) {
  if (a.no_ingest) return nullptr;
  const std::string target = a.db.empty() ? db::default_db_path() : a.db;
  std::error_code ec;
  if (db::is_postgres_target(target) || fs::exists(target, ec)) return db::open_database(a.db);
  return nullptr;
}

// Ingests the ORT profile (timed runs only) as the device, the run's details as the run's notes.
db::IngestResult ingest_profile(std::unique_ptr<db::Connection>& conn, const MeasureArgs& a, const std::string& device,
                                const std::string& model_name, const OneRun& run) {
  if (!conn) conn = db::open_database(a.db);
  const model::LayerGraph& g = run.graph;
  const emit::MeasureResult& res = run.measured.result;
  db::IngestContext ctx;
  ctx.device = device;
  ctx.variant = g.variant.key(model::AxisScope(g.layer));
  ctx.layer = model::to_string(g.layer.type);
  ctx.ctx = g.layer.context;
  ctx.model = model_name;
  ctx.format = db::Format::kOrtJson;
  ctx.notes = "layoutx measure: onnxruntime-node " + res.ort_version + ", CPU EP, " +
              std::to_string(a.run.threads) + " intra-op thread(s), " + std::to_string(a.run.warmup) +
              " warm-up + " + std::to_string(a.run.runs) + " timed runs; session.run wall median " +
              fmt(run.wall_ms, 4) + " ms; profile: " + res.profile_path;
  return db::ingest_file(*conn, res.profile_path, ctx);
}

void print_run_json(const MeasureArgs& a, const std::string& device, const OneRun& run) {
  const model::LayerGraph& g = run.graph;
  const emit::MeasureResult& res = run.measured.result;
  JsonWriter j(std::cout);
  j.begin_object();
  j.field("device", device);
  j.field("variant_key", g.variant.key(model::AxisScope(g.layer)));
  j.field("layer", model::to_string(g.layer.type));
  j.field("ctx", g.layer.context);
  j.field("onnxruntime", res.ort_version);
  j.field("threads", a.run.threads);
  j.field("warmup_ms", res.warmup_ms);
  j.field("runs_ms", res.runs_ms);
  j.field("wall_median_ms", run.wall_ms);
  j.field("model", run.measured.model_path);
  j.field("profile", res.profile_path);
  j.field("timings", res.timings_path);
  if (run.ingested) {
    const db::IngestResult& ing = *run.ingested;
    j.key("ingest").begin_object();
    j.field("run_id", ing.run_id);
    j.field("skipped", ing.skipped);
    j.field("layers", static_cast<int64_t>(ing.layers));
    j.field("ops", static_cast<int64_t>(ing.ops));
    j.end_object();
  }
  j.end_object();
}

void print_run_text(const MeasureArgs& a, const std::string& device, const OneRun& run) {
  const model::LayerGraph& g = run.graph;
  const emit::MeasureResult& res = run.measured.result;
  std::cout << "variant   " << g.variant.key(model::AxisScope(g.layer)) << "\nlayer     " << model::to_string(g.layer.type) << ", ctx "
            << g.layer.context << "\nruntime   onnxruntime-node " << res.ort_version << " (CPU EP, " << a.run.threads
            << " thread(s))\nwall      median " << fmt(run.wall_ms, 4) << " ms over " << res.runs_ms.size()
            << " runs (min " << fmt(*std::min_element(res.runs_ms.begin(), res.runs_ms.end()), 4) << ", max "
            << fmt(*std::max_element(res.runs_ms.begin(), res.runs_ms.end()), 4) << "), after " << res.warmup_ms.size()
            << " warm-up\nfiles     " << run.measured.model_path << "\n          " << res.profile_path << "\n          "
            << res.timings_path << "\n";
  if (run.ingested)
    std::cout << "database  run " << run.ingested->run_id << (run.ingested->skipped ? " (same profile ingested before)" : "")
              << ": " << run.ingested->layers << " layer record(s), " << run.ingested->ops << " op records, device "
              << device << "\n";
  else
    std::cout << "database  not touched\n";
}

// Without --loop: one variant emitted, run in ONNX Runtime, its profile ingested, then printed.
void run_one(const MeasureArgs& a) {
  // 0. Before the run: an existing database (or server) is opened now.
  std::unique_ptr<db::Connection> conn = open_existing_target(a);
  // 1. The device (this CPU's spec), the variant and its graph.
  const auto dev = costmodel::load_device_named(a.device);
  emit::check_ort_device(dev);
  auto r = a.layer.resolve();
  if (!a.no_ingest) require_storable_model(r.model.name);
  model::check_tensor_budget(r.layer, "measure");
  OneRun run{model::build_layer_graph(r.layer, r.variant), {}, 0, std::nullopt};
  // 2. Emit the ONNX (seeded weights, checked) and run it: warm-up, then timed runs with profiling on.
  run.measured = emit::measure_in_ort(r.layer, r.variant, run.graph, a.seed, a.out, a.run);
  run.wall_ms = median(run.measured.result.runs_ms);
  // 3. Ingest the ORT profile (timed runs only) as the device.
  if (!a.no_ingest && !run.measured.result.profile_path.empty())
    run.ingested = ingest_profile(conn, a, dev.name, r.model.name, run);
  // 4. Print.
  if (a.json) print_run_json(a, dev.name, run);
  else print_run_text(a, dev.name, run);
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
    if (a->loop) run_loop(*a);
    else run_one(*a);
  });
}

}  // namespace layoutx::cli
