// layoutx calibrate: fits the cost model to the calibration measurements (layer timings and op
// shares together, regularized toward the device's priors), prints each measurement's fitted
// value and residual and the leave-one-out error of every timing, and saves the calibration.

#include <functional>
#include <iostream>
#include <optional>

#include "cli/hypotheses_output.h"
#include "cli/table.h"
#include "cli/output_flags.h"
#include "cli/json_flag.h"
#include "cli/verbs.h"
#include "cli/public_joint_output.h"
#include "costmodel/calibration.h"
#include "costmodel/calibration_report.h"
#include "costmodel/public_records.h"
#include "explorer/public_joint.h"
#include "explorer/public_layouts.h"
#include "costmodel/device_fit.h"
#include "costmodel/save_advice.h"
#include "costmodel/device_spec.h"
#include "costmodel/freshness.h"
#include "costmodel/measurement_files.h"
#include "costmodel/measurements.h"
#include "db/calibration_records.h"
#include "costmodel/repeated_timings.h"
#include "db/costmodel_records.h"
#include "db/schema.h"
#include "explorer/interval_widths.h"
#include "support/error.h"
#include "support/json_writer.h"
#include "support/paths.h"

namespace layoutx::cli {

namespace {

struct CalibrateArgs {
  std::vector<std::string> data;
  std::string device = costmodel::kDefaultDevice;
  std::string out;            // --out FILE
  bool update_shipped = false;  // --update-shipped: write configs/calibration/<device>.calibration.yaml
  bool json = false;
  bool no_save = false;
  std::string db;  // --db: add the database's timings of the device; record the calibration there
  std::string evidence = "team";  // --evidence all: also weigh the hypotheses by the public records (reported)
};

std::string pct(double v) { return fmt(100.0 * v, 1) + "%"; }

// db_saved / db_id: the database the verbs' predictor was stored in, and its id ("" if none).
void print_table(const costmodel::FitReport& rep, const costmodel::DeviceSpec& dev, const std::string& out,
                 const std::string& db_saved, const std::string& db_id) {
  const costmodel::Calibration& c = rep.calibration;
  std::cout << "fit: " << rep.rows.size() << " measurements, " << c.theta.size() << " coefficients ("
            << fmt(c.effective_parameters, 2) << " effective parameters: trace of the hat matrix)\n\n";
  Table t({"measurement", "kind", "measured", "fitted", "residual", "resid/sd"});
  for (const auto& r : rep.rows) {
    const bool time = r.record->kind == costmodel::MeasurementRecord::Kind::kLayerTime;
    t.add({r.record->id, time ? "ms" : "share", time ? fmt(r.measured, 3) : pct(r.measured),
           time ? fmt(r.fitted, 3) : pct(r.fitted), time ? fmt(r.residual, 3) : pct(r.residual),
           fmt(r.residual / r.sd, 2)});
  }
  t.print(std::cout);
  std::cout << "\nleave-one-out (refit without the timing and its layer's shares, predict it):\n";
  Table l({"timing", "measured ms", "predicted ms", "error"});
  for (const auto& r : rep.loo) l.add({r.record->id, fmt(r.measured_ms, 3), fmt(r.predicted_ms, 3), pct(r.rel_error)});
  l.print(std::cout);
  std::cout << "LOO |error|: median " << pct(c.loo_median) << ", max " << pct(c.loo_max) << ", rms " << pct(c.loo_rms)
            << " over " << c.loo_count << " timings\n\n";
  Table k({"coefficient", "term", "prior", "fitted", "sd", "x prior"});
  for (size_t i = 0; i < dev.coefficients.size(); ++i) {
    const auto& s = dev.coefficients[i];
    const Eigen::Index j = static_cast<Eigen::Index>(i);
    const char* unit = s.term == costmodel::Term::kDispatch || s.term == costmodel::Term::kGraph ? " us"
                       : s.term == costmodel::Term::kMac                                         ? " us/MMAC"
                                                                                                 : " us/MB";
    k.add({s.name, costmodel::to_string(s.term), fmt(s.prior, 3) + unit, fmt(c.theta[j], 3) + unit,
           fmt(std::sqrt(std::max(0.0, c.covariance(j, j))), 3), fmt(c.theta[j] / s.prior, 2)});
  }
  k.print(std::cout);
  std::cout << "\ncalibration " << c.id << " (data hash " << c.data_hash << ")";
  if (!out.empty()) std::cout << " written to " << out;
  if (!db_saved.empty())
    std::cout << (out.empty() ? "" : ";") << " stored in database " << db_saved
              << (db_id == c.id ? "" : " as " + db_id + " (the kept hypotheses, by weight: what --db verbs predict with)");
  if (out.empty() && db_saved.empty()) std::cout << " not saved (--out FILE, --update-shipped or --db DB saves it)";
  std::cout << "\n";
}

// `extra` adds fields to the document (the hypothesis report), or is empty.
void print_json(const costmodel::FitReport& rep, const costmodel::DeviceSpec& dev, const std::string& out,
                const std::string& db_saved, const std::string& db_id, const std::function<void(JsonWriter&)>& extra) {
  const costmodel::Calibration& c = rep.calibration;
  JsonWriter w(std::cout);
  w.begin_object();
  w.field("calibration_id", c.id);
  w.field("data_hash", c.data_hash);
  w.field("device", c.device);
  w.field("written_to", out);
  w.field("stored_in_database", db_saved);
  w.field("stored_calibration_id", db_id);  // what --db verbs load: the kept hypotheses' mixture
  w.field("effective_parameters", c.effective_parameters);
  w.key("fit").begin_array();
  for (const auto& r : rep.rows) {
    w.begin_object();
    w.field("id", r.record->id);
    w.field("kind", costmodel::to_string(r.record->kind));
    w.field("measured", r.measured);
    w.field("fitted", r.fitted);
    w.field("residual", r.residual);
    w.field("sd", r.sd);
    w.end_object();
  }
  w.end_array();
  w.key("loo").begin_object();
  w.field("median_abs_rel_error", c.loo_median);
  w.field("max_abs_rel_error", c.loo_max);
  w.field("rms_rel_error", c.loo_rms);
  w.key("timings").begin_array();
  for (const auto& r : rep.loo) {
    w.begin_object();
    w.field("id", r.record->id);
    w.field("measured_ms", r.measured_ms);
    w.field("predicted_ms", r.predicted_ms);
    w.field("rel_error", r.rel_error);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  w.key("coefficients").begin_array();
  for (size_t i = 0; i < dev.coefficients.size(); ++i) {
    const Eigen::Index j = static_cast<Eigen::Index>(i);
    w.begin_object();
    w.field("name", dev.coefficients[i].name);
    w.field("term", costmodel::to_string(dev.coefficients[i].term));
    w.field("prior", dev.coefficients[i].prior);
    w.field("value", c.theta[j]);
    w.field("sd", std::sqrt(std::max(0.0, c.covariance(j, j))));
    w.end_object();
  }
  w.end_array();
  if (extra) extra(w);
  w.end_object();
}

void add_calibrate_flags(CLI::App& sub, CalibrateArgs& a) {
  sub.add_option("--data", a.data, "measurement file (repeatable; default: the device's calibration.measurements)");
  sub.add_option("--device", a.device, "device: a name under configs/devices/ or a device .yaml")->capture_default_str();
  auto* out = sub.add_option("--out", a.out, "write the calibration to this file")->check(output_file());
  sub.add_flag("--update-shipped", a.update_shipped,
               "write the device's own calibration files (calibration.saved and .hypotheses of its spec; git-tracked)")->excludes(out);
  sub.add_flag("--no-save", a.no_save, "print the fit only (not even into --db)");
  sub.add_option("--evidence", a.evidence,
                 "all: also weigh the hypotheses by the public records of configs/public/ and report the joint fit "
                 "(what is saved keeps the team's weights; the verbs weigh the shipped mixture when they load it)")
      ->check(CLI::IsMember({"team", "all"}))
      ->capture_default_str();
  sub.add_option("--db", a.db, "also fit on the layer timings stored for the device in this existing database "
                               "(repeats of one graph combined), and store the calibration there");
}

// Before any work: --update-shipped writes the files the spec names; a renamed copy still naming
// the original's files must not overwrite that device's calibration.
void check_update_shipped(const CalibrateArgs& a, const costmodel::DeviceSpec& dev) {
  if (a.update_shipped && dev.calibration.saved.empty())
    throw Error("--update-shipped: " + dev.source + " names no calibration file to write (calibration.saved)");
  if (a.update_shipped && !costmodel::others_saved_fit(dev).empty())
    throw Error("--update-shipped: " + costmodel::save_advice(dev));
}

// --data's files, or the device's own calibration.measurements; none is an error without --db.
std::vector<std::string> data_files(const CalibrateArgs& a, const costmodel::DeviceSpec& dev) {
  std::vector<std::string> files = a.data;
  if (files.empty() && !dev.calibration.measurements.empty())
    files.push_back(costmodel::device_file(dev.calibration.measurements));
  if (files.empty() && a.db.empty())
    throw Error("--data: " + dev.source + " names no measurements (calibration.measurements); give --data FILE or --db DB");
  return files;
}

// What the fit is made on.
struct FitInputs {
  std::vector<std::string> files;  // the data files, then (with --db) the database's path
  costmodel::MeasurementFiles read;  // the data files' records, bytes and export names
  std::vector<costmodel::MeasurementRecord> records;  // what is fitted: repeats combined, the database's added
  std::unique_ptr<db::Connection> conn;  // --db, else null
};

// The device's timings from the database joined to the files' (a file given here and also
// ingested counts once; repeats of one graph, in the files or the database, become one timing:
// their mean; per-op profiles of timed graphs add one op share per cost class and profile).
// Rows no op of their graph matches (a converter-inserted op, or a profile of another export)
// still count in their profile's whole; said on stderr with how many, so a wrong graph shows.
void add_database_timings(FitInputs& in, const std::string& db, const costmodel::DeviceSpec& dev) {
  in.conn = db::open_existing_database(db);
  std::vector<std::string> unmatched;
  in.records = db::with_database_records(*in.conn, dev.name, dev.boundaries, in.files, in.read.records, &unmatched);
  if (!unmatched.empty())
    std::cerr << "layoutx: calibrate: " << unmatched.size() << " per-op profile row" << (unmatched.size() == 1 ? "" : "s")
              << " matched no op of the profiled graph; counted only in the profile's total (first: " << unmatched.front()
              << ")\n";
  in.files.push_back(in.conn->path());
}

// The fit and where it went ("" where it was not saved).
struct Saved {
  costmodel::DeviceFit fit;
  std::optional<costmodel::CalibrationReport> report;  // the hypotheses' report, when the device has hypotheses
  std::string out;       // the calibration file written
  std::string hyps_out;  // the kept hypotheses' file written
  std::string db_saved, db_id;  // the database the verbs' predictor was stored in, and its id
};

// With --db: stores the predictor the verbs use, with its id, data hash, provenance and LOO
// error: the kept hypotheses with their weights, or for a device without hypotheses the whole
// calibration document (DeviceFit::document). predict --db etc. load it back.
void store_in_database(const FitInputs& in, const costmodel::DeviceSpec& dev, Saved& s) {
  const costmodel::FitReport& rep = s.fit.single;
  std::string provenance;
  for (const auto& f : in.files) provenance += (provenance.empty() ? "" : ", ") + f;
  provenance = "fitted on " + provenance + " (" + std::to_string(in.records.size()) + " records)";
  s.db_id = s.fit.predictor->calibration_id();
  if (s.fit.hypotheses)
    db::record_calibration(*in.conn, s.db_id, dev.name, s.fit.document(), rep.calibration.data_hash,
                           provenance + ", " + std::to_string(s.fit.predictor->hypothesis_count()) + " hypotheses kept",
                           s.report->combined.loo.median_abs);
  else
    db::record_calibration(*in.conn, s.db_id, dev.name, s.fit.document(), rep.calibration.data_hash, provenance,
                           rep.calibration.loo_median);
  s.db_saved = in.conn->path();
}

// Fits (files under the config dir are recorded relative to it, so the saved calibration does
// not name this machine's paths; with hypotheses each is fitted too, and the predictor the verbs
// use is their mixture, costmodel/device_fit.h), then saves unless --no-save: a file only when
// asked (the shipped one is git-tracked: a plain calibrate leaves the checkout clean), the
// hypotheses beside the shipped calibration when that is what is written (--update-shipped,
// fitted on files alone), and with --db the predictor into the database.
Saved fit_and_save(const CalibrateArgs& a, const costmodel::DeviceSpec& dev, const FitInputs& in) {
  std::vector<std::string> provenance;
  for (const auto& f : in.files) provenance.push_back(shown_path(f));
  Saved s{costmodel::fit_device(in.records, dev, provenance), std::nullopt, "", "", "", ""};
  costmodel::FitReport& rep = s.fit.single;
  if (!in.conn) rep.calibration.source_hash = costmodel::fit_stamp(costmodel::SavedFit::kCalibration, in.read.bytes, dev);  // files alone: checkable by bytes
  if (!a.no_save && (!a.out.empty() || a.update_shipped)) {
    s.out = a.update_shipped ? costmodel::device_file(dev.calibration.saved) : a.out;
    costmodel::save_calibration(rep.calibration, &rep, s.out);
  }
  if (s.fit.hypotheses) {
    s.report = costmodel::calibration_report(*s.fit.hypotheses, in.records, dev, in.read.export_names);
    if (!a.no_save && a.update_shipped && !in.conn && !dev.calibration.hypotheses.empty()) {
      s.hyps_out = costmodel::device_file(dev.calibration.hypotheses);
      s.fit.save_hypotheses(in.read.bytes, dev, s.hyps_out);
    }
  }
  if (in.conn && !a.no_save) store_in_database(in, dev, s);
  return s;
}

// --evidence all: the joint fit with the public records, and the team's timings under its weights
// (explorer/public_joint.h). Reported only: nothing saved changes. Filled in place: the joint
// fit's records point into `records`.
struct PublicEvidence {
  std::optional<costmodel::PublicTimings> records;
  std::optional<explorer::PublicJoint> joint;
  std::optional<costmodel::CalibrationReport> report;
};

void weigh_with_public_records(const costmodel::DeviceSpec& dev, const FitInputs& in, const Saved& s, PublicEvidence& e) {
  if (!s.fit.hypotheses) throw Error("--evidence all: device " + dev.name + " has no hypotheses to weigh");
  e.records = costmodel::read_public_timings(costmodel::shipped_public_timings());
  e.joint = explorer::fit_public_joint(*s.fit.predictor, *e.records, dev.runtime, explorer::public_chip(dev));
  e.report = costmodel::calibration_report(explorer::with_joint_weights(*s.fit.hypotheses, *e.joint), in.records, dev,
                                           in.read.export_names);
}

// The fit, then the hypotheses, interval widths, the hypotheses file and the public evidence
// where there are any: as one JSON document, or as tables.
void print_results(bool json, const costmodel::DeviceSpec& dev, const std::vector<costmodel::MeasurementRecord>& records,
                   const Saved& s, const PublicEvidence& e) {
  const costmodel::FitReport& rep = s.fit.single;
  const costmodel::HypothesisSet* hyps = s.fit.hypotheses ? &*s.fit.hypotheses : nullptr;
  const auto widths = explorer::interval_widths_of_records(*s.fit.predictor, records);
  if (json) {
    print_json(rep, dev, s.out, s.db_saved, s.db_id, [&](JsonWriter& w) {
      if (hyps) write_hypotheses_json(*hyps, *s.report, *s.fit.predictor, w);
      if (widths) write_interval_widths_json(*widths, w);
      if (!s.hyps_out.empty()) w.field("hypotheses_written_to", s.hyps_out);
      if (e.joint) {
        w.key("public_joint").begin_object();
        write_team_fit_both_ways(w, s.report->combined, e.report->combined);
        write_public_joint_json(w, *e.joint, "this fit");
        w.end_object();
      }
    });
    return;
  }
  print_table(rep, dev, s.out, s.db_saved, s.db_id);
  if (hyps) print_hypotheses(*hyps, *s.report, *s.fit.predictor, std::cout);
  if (widths) print_interval_widths(*widths, std::cout);
  if (!s.hyps_out.empty())
    std::cout << "\nhypotheses: the " << s.fit.predictor->hypothesis_count() << " kept of " << hyps->fits.size()
              << " written to " << s.hyps_out << "\n";
  if (e.joint) {
    print_team_fit_both_ways(s.report->combined, e.report->combined, std::cout);
    std::cout << "\n";
    print_public_joint(*e.joint, explorer::public_chip(dev), "this fit", false);
  }
}

}  // namespace

void add_calibrate_verb(CLI::App& app) {
  auto args = std::make_shared<CalibrateArgs>();
  auto* sub = app.add_subcommand("calibrate", "fit the cost model to measurements; print the fit and leave-one-out error");
  add_calibrate_flags(*sub, *args);
  sub->callback([args, sub] {
    args->json = json_requested(*sub);  // the one --json (cli/json_flag.h)
    // 1. The device spec (priors), --update-shipped's checks before any work, and the records of
    //    every data file: a file given with --data must be this device's timings.
    costmodel::DeviceSpec dev = costmodel::load_device_named(args->device);
    check_update_shipped(*args, dev);
    FitInputs in;
    in.files = data_files(*args, dev);
    in.read = costmodel::read_measurement_files(in.files, args->data.empty() ? "" : dev.name);
    // 1b. With --db: the device's timings from the database too; else the files' repeats combined.
    if (!args->db.empty()) add_database_timings(in, args->db, dev);
    else in.records = costmodel::combine_repeated_timings(in.read.records, {});
    // 2. Records from several files must still agree on their graphs and ids.
    costmodel::check_against_graphs(in.records);
    // 3. Fit, per-measurement residuals, leave-one-out; save unless asked not to.
    const Saved s = fit_and_save(*args, dev, in);
    // 4. With --evidence all: the joint fit with the public records (reported only).
    PublicEvidence evidence;
    if (args->evidence == "all") weigh_with_public_records(dev, in, s, evidence);
    // 5. Print.
    print_results(args->json, dev, in.records, s, evidence);
  });
}

}  // namespace layoutx::cli
