// layoutx regress: for each (device, model, variant, layer, ctx, boundary) with measurements, the
// latest measurement against the cost model's prediction (outside the interval?) and against the
// previous measurement (slower by more than --tolerance?). Exit status: 0 clean, 1 regression,
// 2 error. --plot: predicted vs measured, and each key's history (gnuplot).
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "cli/calibration_source.h"
#include "cli/plot.h"
#include "cli/db_flags.h"
#include "cli/flag_checks.h"
#include "cli/table.h"
#include "cli/output_flags.h"
#include "cli/json_flag.h"
#include "cli/verbs.h"
#include "db/known_names.h"
#include "db/regress.h"
#include "db/schema.h"
#include "model/builder.h"
#include "model/design_space.h"
#include "model/model_loader.h"
#include "support/error.h"
#include "support/json_writer.h"

namespace layoutx::cli {

namespace {

struct RegressArgs {
  DbQueryFlags query;  // --db, --device, --model
  std::string calibration;  // --calibration FILE: predict with it instead of the database's latest
  double tolerance = 0.03;
  bool record_predictions = false;
  bool json = false;
  std::string plot;
};

// Each model's axis scope (its own GELU...), so names are the model's: a tanh-GELU model's ring
// is "ring"; nullopt when its config is gone (then the design-space table's defaults).
using Scopes = std::map<std::string, std::optional<model::AxisScope>>;
Scopes scopes_of(const db::RegressResult& r) {
  Scopes s;
  for (const auto& row : r.rows) {
    if (s.count(row.key.model)) continue;
    try {
      s[row.key.model] = model::AxisScope(model::load_model(row.key.model));
    } catch (const Error&) {
      s[row.key.model] = std::nullopt;
    }
  }
  return s;
}

// A variant as the nearest preset plus the axes that differ from it (relative to the model),
// then the precision: "roll/fp16", "score-join+gelu=tanh/fp16" (Spark).
std::string variant_label(const db::MeasurementKey& k, const Scopes& scopes) {
  auto it = scopes.find(k.model);
  const model::AxisScope* scope = it != scopes.end() && it->second ? &*it->second : nullptr;
  model::Variant v = model::parse_variant(k.variant_key);
  if (scope) {
    try {
      v = model::parse_variant(k.variant_key, {}, *scope);
    } catch (const Error&) {
      scope = nullptr;  // a key the model's axes do not take: named by the table's defaults
    }
  }
  return model::design_space().display_name(v, scope) + "/" + model::to_string(v.precision());
}

std::string short_key(const db::MeasurementKey& k, const Scopes& scopes) {
  return variant_label(k, scopes) + " " + k.layer_type + " ctx " + std::to_string(k.ctx);
}

std::string pct(double v) { return (v >= 0 ? "+" : "") + fmt(100.0 * v, 1) + "%"; }

void print_table(const db::RegressResult& r, double tolerance, const db::DevicePredictions& predictions, const Scopes& scopes) {
  Table t({"device", "model", "variant", "layer", "ctx", "boundary", "n", "latest ms", "previous ms", "change",
           "predicted ms", "interval", "vs prediction", "verdict"});
  for (const auto& row : r.rows) {
    const auto& k = row.key;
    t.add({k.device, k.model, variant_label(k, scopes), k.layer_type, std::to_string(k.ctx), k.boundary, std::to_string(row.history_ms.size()),
           fmt(row.latest_ms, 3), row.previous_ms ? fmt(*row.previous_ms, 3) : "-", row.change ? pct(*row.change) : "-",
           row.predicted ? fmt(row.predicted->ms, 3) : "-",
           row.predicted ? "[" + fmt(row.predicted->low_ms, 3) + ", " + fmt(row.predicted->high_ms, 3) + "]" : "-",
           row.prediction_failed ? std::string("prediction failed") : row.prediction_status, db::verdict(row)});
  }
  t.print(std::cout);
  int n = 0;
  for (const auto& row : r.rows) n += row.regression;
  std::cout << "\n" << r.rows.size() << " keys, " << n << " regressed (tolerance " << fmt(100.0 * tolerance, 1)
            << "% against the previous measurement; above the prediction interval)";
  if (r.prediction_failures) std::cout << ", " << r.prediction_failures << " not predicted (ERROR)";
  std::cout << "\n";
  for (const auto& [device, src] : predictions.sources())
    std::cout << device << ": " << (src.first.empty() ? src.second : "calibration " + src.first + " (" + src.second + ")")
              << "\n";
}

void print_json(const db::RegressResult& r, const RegressArgs& a, const db::DevicePredictions& predictions) {
  JsonWriter w(std::cout);
  w.begin_object();
  w.field("tolerance", a.tolerance);
  w.field("regression", r.any_regression);
  w.key("calibrations").begin_array();
  for (const auto& [device, src] : predictions.sources()) {
    w.begin_object();
    w.field("device", device);
    w.key("calibration_id");
    src.first.empty() ? w.null() : w.value(src.first);
    w.field("calibration_source", src.second);
    w.end_object();
  }
  w.end_array();
  w.key("rows").begin_array();
  for (const auto& row : r.rows) {
    w.begin_object();
    w.field("device", row.key.device);
    w.field("model", row.key.model);
    w.field("variant_key", row.key.variant_key);
    w.field("layer", row.key.layer_type);
    w.field("ctx", row.key.ctx);
    w.field("boundary", row.key.boundary);
    w.field("history_ms", row.history_ms);
    w.field("latest_ms", row.latest_ms);
    w.key("previous_ms");
    row.previous_ms ? w.value(*row.previous_ms) : w.null();
    w.key("change");
    row.change ? w.value(*row.change) : w.null();
    w.field("slower_than_previous", row.slower_than_previous);
    w.key("prediction");
    if (row.predicted) {
      w.begin_object();
      w.field("ms", row.predicted->ms);
      w.field("low_ms", row.predicted->low_ms);
      w.field("high_ms", row.predicted->high_ms);
      w.field("calibration_id", row.predicted->calibration_id);
      w.end_object();
    } else {
      w.null();
    }
    w.field("prediction_status", row.prediction_status);
    w.field("prediction_failed", row.prediction_failed);
    w.field("regression", row.regression);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

// Two panels: predicted vs measured (with the interval, y = x for reference), and each key's
// measurements in ingest order.
void plot(const db::RegressResult& r, const std::string& png, const Scopes& scopes) {
  const std::string pred = "pred.dat", hist = "hist.dat";  // in plot_to_png's scratch folder
  double hi = 0;
  int npred = 0;
  std::ostringstream p, h;
  {
    for (const auto& row : r.rows) {
      if (row.predicted) {
        p << row.predicted->ms << ' ' << row.latest_ms << ' ' << row.predicted->low_ms << ' ' << row.predicted->high_ms
          << " \"" << short_key(row.key, scopes) << "\"\n";
        hi = std::max({hi, row.predicted->high_ms, row.latest_ms});
        ++npred;
      }
      h << "\"" << short_key(row.key, scopes) << " (" << row.key.boundary << ")\"\n";
      for (size_t i = 0; i < row.history_ms.size(); ++i) h << i + 1 << ' ' << row.history_ms[i] << '\n';
      h << "\n\n";
    }
  }
  std::string script =
      "set termoption noenhanced\n"
      "set multiplot layout 1,2\n"
      "set title 'predicted vs measured (latest), with the prediction interval'\n"
      "set xlabel 'predicted ms'\nset ylabel 'measured ms'\nset key top left\nset grid\n";
  if (npred > 0) {
    script += "set xrange [0:" + std::to_string(hi * 1.1) + "]\nset yrange [0:" + std::to_string(hi * 1.1) + "]\n"
              "plot '" + pred + "' using 1:2:3:4 with xerrorbars pt 7 title 'measured vs [low, high]', x with lines dt 2 title 'measured = predicted'\n";
  } else {
    script += "set label 1 'no predictions (no predictor for these devices)' at graph 0.2, graph 0.5\n"
              "plot [0:1] [0:1] NaN notitle\nunset label 1\n";
  }
  script += "set autoscale\nset title 'history per key (ingest order)'\nset xlabel 'measurement #'\nset ylabel 'ms'\n"
            "set key outside right top font ',8'\nset xtics 1\n"
            "plot for [i=0:" + std::to_string(std::max<size_t>(r.rows.size(), 1) - 1) + "] '" + hist +
            "' index i using 1:2 with linespoints title columnheader(1)\n"
            "unset multiplot\n";
  plot_to_png("size 1500,600 font ',9'", script, {{pred, p.str()}, {hist, h.str()}}, png, "--plot " + png);
}

}  // namespace

void add_regress_verb(CLI::App& app) {
  auto args = std::make_shared<RegressArgs>();
  auto* sub = app.add_subcommand("regress", "latest measurements vs predictions and vs the previous measurement; "
                                            "exit 0 clean, 1 regression, 2 error");
  args->query.add_to(*sub);
  sub->add_option("--calibration", args->calibration,
                  "predict with this calibration file (default: the database's latest for the device, else the shipped one)");
  sub->add_option("--tolerance", args->tolerance, "relative slowdown against the previous measurement")
      ->capture_default_str()->check(number_in(0.0, 10.0));
  sub->add_flag("--record-predictions", args->record_predictions,
                "store the predictions made in the database (report's calibration error over time)");
  sub->add_option("--plot", args->plot, "write predicted vs measured and the histories to this PNG (gnuplot)")
      ->check(output_file());
  sub->callback([args, sub] {
    args->json = json_requested(*sub);  // the one --json (cli/json_flag.h)
    // 1. Open the existing database (read-only unless asked to record the predictions); 2. a
    // mistyped device or model is an error, not "0 keys, 0 regressed".
    auto conn = args->query.open(/*for_writing=*/args->record_predictions);
    // 3. Compare every key's latest measurement with its previous one and with its prediction.
    db::RegressOptions opt;
    opt.device = args->query.device;
    opt.model = args->query.model;
    opt.tolerance = args->tolerance;
    opt.record_predictions = args->record_predictions;
    db::DevicePredictions predictions = database_key_predictions(args->calibration, *conn);
    opt.predicts = [&predictions](const db::MeasurementKey& k) { return predictions.predicts(k); };
    for (const auto& d : db::measured_devices(*conn))
      if (args->query.device.empty() || d == args->query.device) predictions.load(d);
    db::RegressResult r = db::regress(*conn, opt, std::ref(predictions));
    // 4. Print; plot if asked.
    const Scopes scopes = scopes_of(r);
    if (args->json) print_json(r, *args, predictions);
    else print_table(r, args->tolerance, predictions, scopes);
    if (!args->plot.empty()) plot(r, args->plot, scopes);
    // 5. The exit status a CI job gates on: a key whose prediction failed was not checked, so
    //    the gate cannot pass it (exit 2, after the table, naming every such key).
    if (r.prediction_failures) {
      std::map<std::string, std::pair<int, std::string>> by_reason;  // message -> (keys, the first key)
      for (const auto& row : r.rows) {
        if (!row.prediction_failed) continue;
        auto& [n, first] = by_reason[row.prediction_status.substr(std::string("prediction failed: ").size())];
        if (n++ == 0)
          first = row.key.device + " " + row.key.model + " " + variant_label(row.key, scopes) + " " + row.key.layer_type +
                  " ctx " + std::to_string(row.key.ctx);
      }
      ErrorList failed;
      for (const auto& [why, what] : by_reason)
        failed.add("regress: " + std::to_string(what.first) + (what.first == 1 ? " key" : " keys") +
                   " not predicted, so not checked (first: " + what.second + "): " + why);
      failed.throw_if_any();
    }
    if (r.any_regression) verb_exit_status() = 1;
  });
}

}  // namespace layoutx::cli
