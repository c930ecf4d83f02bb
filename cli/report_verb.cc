// layoutx report: what the measurement database holds, per device and model: counts, coverage of
// the design space (presets x precisions x layer types, and every valid variant), which variants
// were never measured, and the calibration error over time.
#include <filesystem>
#include <iostream>
#include <optional>

#include "cli/calibration_source.h"
#include "cli/choice_output.h"
#include "cli/db_flags.h"
#include "cli/flag_checks.h"
#include "cli/html_report.h"
#include "cli/output_flags.h"
#include "cli/question_defaults.h"
#include "cli/table.h"
#include "cli/json_flag.h"
#include "cli/verbs.h"
#include "db/ingest.h"
#include "db/report.h"
#include "db/schema.h"
#include "explorer/evaluator.h"
#include "model/model_loader.h"
#include "support/atomic_file.h"
#include "support/clock.h"
#include "support/json_writer.h"

namespace layoutx::cli {

namespace {

struct ReportArgs {
  DbQueryFlags query;       // --db, --device, --model (filters: "" = every one)
  std::string html;         // --html DIR
  bool force = false;       // --force: replace a non-empty --html folder
  std::string calibration;  // --calibration FILE (the page's predictions)
  int decision_ctx = kDefaultContext;
  bool json = false;
};

void print_table(const std::vector<db::DeviceModelReport>& reps, const std::string& path) {
  std::cout << "database " << path << "\n";
  if (reps.empty()) std::cout << "no layer measurements yet (layoutx ingest FILE --device D ...)\n";
  for (const auto& r : reps) {
    std::cout << "\n== " << r.device << " / " << r.model << "\n"
              << "runs " << r.runs << ", layer measurements " << r.layer_measurements << ", op measurements "
              << r.op_measurements << ", op shares " << r.op_shares << ", compile outcomes " << r.compile_outcomes
              << ", variants measured " << r.variants_measured << "\n"
              << "design space: " << r.space_measured << " of " << r.space_size << " (variant, layer type) pairs measured ("
              << fmt(100.0 * r.space_measured / std::max(1, r.space_size), 1) << "%)\n\n";
    Table t({"layer", "preset", "fp16", "w8a16", "w4a16"});
    std::vector<std::string> never;
    for (size_t i = 0; i < r.presets.size(); i += 3) {
      std::vector<std::string> row = {r.presets[i].layer_type, r.presets[i].preset};
      for (size_t j = i; j < i + 3; ++j) {
        row.push_back(r.presets[j].measurements ? std::to_string(r.presets[j].measurements) : "never");
        if (!r.presets[j].measurements)
          never.push_back(r.presets[j].preset + "/" + r.presets[j].precision + " " + r.presets[j].layer_type);
      }
      t.add(row);
    }
    std::cout << "measurements per preset x precision:\n";
    t.print(std::cout);
    std::cout << "never measured (" << never.size() << " of " << r.presets.size() << " preset cells):";
    for (const auto& n : never) std::cout << " " << n << ";";
    std::cout << "\n\ncalibration error over time (stored predictions vs the latest measurement of their key):\n";
    if (r.calibration.empty()) {
      std::cout << "  none yet (layoutx regress --record-predictions records the predictions it compares)\n";
      continue;
    }
    Table c({"calibration", "first used", "predictions", "mean |error|", "LOO (fit)"});
    for (const auto& e : r.calibration)
      c.add({e.calibration_id, e.first_used, std::to_string(e.predictions), fmt(100.0 * e.mean_abs_rel_error, 1) + "%",
             e.loo_error ? fmt(100.0 * *e.loo_error, 1) + "%" : "-"});
    c.print(std::cout);
  }
}

void print_json(const std::vector<db::DeviceModelReport>& reps, const std::string& path) {
  JsonWriter w(std::cout);
  w.begin_object();
  w.field("database", path);
  w.key("reports").begin_array();
  for (const auto& r : reps) {
    w.begin_object();
    w.field("device", r.device);
    w.field("model", r.model);
    w.field("runs", r.runs);
    w.field("layer_measurements", r.layer_measurements);
    w.field("op_measurements", r.op_measurements);
    w.field("op_shares", r.op_shares);
    w.field("compile_outcomes", r.compile_outcomes);
    w.field("variants_measured", r.variants_measured);
    w.field("space_size", r.space_size);
    w.field("space_measured", r.space_measured);
    w.key("presets").begin_array();
    for (const auto& c : r.presets) {
      w.begin_object();
      w.field("layer", c.layer_type);
      w.field("preset", c.preset);
      w.field("precision", c.precision);
      w.field("measurements", c.measurements);
      w.end_object();
    }
    w.end_array();
    w.key("calibration_error").begin_array();
    for (const auto& e : r.calibration) {
      w.begin_object();
      w.field("calibration_id", e.calibration_id);
      w.field("first_used", e.first_used);
      w.field("predictions", e.predictions);
      w.field("mean_abs_rel_error", e.mean_abs_rel_error);
      w.key("loo_error");
      e.loo_error ? w.value(*e.loo_error) : w.null();
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

// The page's data: the report, regress's rows against the current calibrations (read-only:
// nothing recorded), and what select chooses now for each measured model and precision.
HtmlReportInput html_input(db::Connection& conn, const ReportArgs& a, std::vector<db::DeviceModelReport> reps) {
  HtmlReportInput in;
  in.database = conn.path();
  in.generated_at = utc_now();
  in.reports = std::move(reps);
  db::DevicePredictions predictions = database_key_predictions(a.calibration, conn);
  db::RegressOptions opt;
  opt.device = a.query.device;
  opt.model = a.query.model;
  in.tolerance = opt.tolerance;
  opt.predicts = [&predictions](const db::MeasurementKey& k) { return predictions.predicts(k); };
  in.regress = db::regress(conn, opt, std::ref(predictions));
  for (const auto& r : in.reports) {
    costmodel::Predictor* predictor = predictions.load(r.device);
    if (!predictor) continue;
    explorer::Evaluator ev(*predictor);
    model::ModelSpec m = model::load_model(r.model);
    for (auto p : {model::Precision::kFp16, model::Precision::kW8A16, model::Precision::kW4A16}) {
      explorer::ContextAnswer ans = explorer::answer_context(ev, m, a.decision_ctx, p, explorer::same_policy({}));
      for (const auto& c : ans.choices) {
        ReportDecision d;
        d.device = r.device;
        d.model = r.model;
        d.precision = model::to_string(p);
        d.layer = model::to_string(c.layer);
        d.ctx = a.decision_ctx;
        const model::AxisScope scope(m);
        d.chosen = short_name(c.chosen.eval.variant, &scope);
        d.chosen_ms = c.chosen.eval.prediction.latency_ms;
        if (c.runner_up) {
          d.runner_up = short_name(c.runner_up->eval.variant, &scope);
          d.runner_up_ms = c.runner_up->eval.prediction.latency_ms;
        }
        d.margin_ms = c.margin_ms;
        d.tie = c.tie;
        d.calibration_id = predictor->calibration_id();
        in.decisions.push_back(d);
      }
    }
  }
  in.calibrations = predictions.sources();
  return in;
}

}  // namespace

void add_report_verb(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  auto* sub = app.add_subcommand("report", "what the measurement database holds: counts, design-space coverage, "
                                           "calibration error over time");
  args->query.add_to(*sub);
  sub->add_option("--html", args->html, "also write a static page with SVG plots to DIR/index.html (a new or empty folder)")
      ->check(output_folder());
  add_force_flag(*sub, args->force, "--html");
  sub->add_option("--calibration", args->calibration,
                  "the page's predictions from this calibration file (default: the database's latest, else the shipped one)");
  sub->add_option("--decision-ctx", args->decision_ctx, "context (tokens) of the page's latest decisions")
      ->capture_default_str()->check(integer_in(1, 1 << 20));
  sub->callback([args, sub] {
    args->json = json_requested(*sub);  // the one --json (cli/json_flag.h)
    // 0. The page's folder, staged beside the target before any work (published whole in 3).
    std::optional<StagedFolder> folder;
    if (!args->html.empty()) folder.emplace(args->html, args->force, "--html");
    // 1. Open the existing database read-only; a mistyped device or model is an error.
    auto conn = args->query.open();
    // 2. Counts, coverage and calibration error per device and model.
    auto reps = db::report(*conn, args->query.device, args->query.model);
    // 3. The page, if asked (written before printing, so a bad DIR fails the verb with nothing printed).
    std::string page;
    if (folder) {
      const std::string staged = write_html_report(folder->path().string(), html_input(*conn, *args, reps));
      folder->publish();
      page = (std::filesystem::path(args->html) / std::filesystem::path(staged).filename()).string();
    }
    // 4. Print.
    if (args->json) print_json(reps, conn->path());
    else print_table(reps, conn->path());
    if (!page.empty() && !args->json) std::cout << "\nwrote " << page << "\n";
  });
}

}  // namespace layoutx::cli
