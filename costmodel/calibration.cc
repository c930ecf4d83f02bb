#include "costmodel/calibration.h"
#include "support/median.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>

#include "costmodel/cost_model.h"
#include "costmodel/features.h"
#include "costmodel/layer_features.h"
#include "costmodel/lowering.h"
#include "costmodel/nnls.h"
#include "costmodel/overlap.h"
#include "support/atomic_file.h"
#include "support/clock.h"
#include "support/error.h"
#include "support/hash.h"
#include "support/paths.h"
#include "support/yaml_reader.h"

namespace layoutx::costmodel {

namespace {

using Kind = MeasurementRecord::Kind;

// Design rows of every record, built once (the graphs do not change between LOO refits).
struct Prepared {
  std::vector<Eigen::VectorXd> row;        // timing: the layer's row; share: the matched ops' row
  std::vector<Eigen::VectorXd> layer_row;  // the whole layer's row
  std::vector<double> layer_ms;            // share: its layer's measured ms; timing: own ms
  std::vector<std::string> key;            // graph key
};

Prepared prepare(const std::vector<MeasurementRecord>& records, const DeviceSpec& device) {
  Prepared p;
  std::map<std::string, double> timed_ms;
  for (const MeasurementRecord& r : records) {
    model::LayerGraph g = build_graph(r);
    const LayerFeatures lf = featurize_layer(g, device);
    const std::vector<LoweredOp>& ops = lf.ops;
    const std::vector<OpFeatures>& fs = lf.op_features;
    Eigen::VectorXd all = layer_design_row(device, lf);
    Eigen::VectorXd matched = Eigen::VectorXd::Zero(all.size());
    if (r.kind == Kind::kOpShare)
      for (size_t i = 0; i < ops.size(); ++i) {
        bool hit = false;
        for (const std::string& pat : r.ops) hit |= glob_match(pat, ops[i].name);
        if (hit) matched += design_row(device, fs[i]);
      }
    p.key.push_back(graph_key(r));
    p.row.push_back(r.kind == Kind::kLayerTime ? all : matched);
    p.layer_row.push_back(all);
    p.layer_ms.push_back(r.kind == Kind::kLayerTime ? r.ms : 0.0);
    if (r.kind == Kind::kLayerTime) timed_ms[p.key.back()] = r.ms;
  }
  for (size_t i = 0; i < records.size(); ++i)
    if (records[i].kind == Kind::kOpShare) {
      auto it = timed_ms.find(p.key[i]);
      if (it == timed_ms.end())
        throw Error(records[i].source + ": " + records[i].id + ": a share needs a timing of the same layer");
      p.layer_ms[i] = it->second;
    }
  return p;
}

struct Solved {
  Eigen::VectorXd theta;
  Eigen::MatrixXd normal_inverse;  // (A'A)^-1 in multiplier space
  double effective_parameters = 0;
};

// Weighted, prior-regularized, non-negative fit over the records with use[i] true, each timing
// priced by its row in `timing_row` (the effective row under an assignment of the shorter side,
// costmodel/overlap.h; the raw row without overlap).
Solved solve_linear(const std::vector<MeasurementRecord>& records, const Prepared& p, const DeviceSpec& device,
                    const std::vector<bool>& use, const std::vector<Eigen::VectorXd>& timing_row) {
  const Eigen::Index n = static_cast<Eigen::Index>(device.coefficients.size());
  const Eigen::VectorXd prior = prior_theta(device);
  std::vector<Eigen::VectorXd> rows;
  std::vector<double> rhs;
  for (size_t i = 0; i < records.size(); ++i) {
    if (!use[i]) continue;
    const MeasurementRecord& r = records[i];
    const double total_us = p.layer_ms[i] * 1e3;
    if (r.kind == Kind::kLayerTime) {
      rows.push_back(timing_row[i].cwiseProduct(prior) / (total_us * r.sd));
      rhs.push_back(1.0 / r.sd);
    } else {
      // A share is the matched ops' part of the layer's busy time (the sum of its ops' times,
      // what a profile's rows add up to: costmodel/op_profile_shares.h), not of its critical
      // path: (matched - share x layer) . theta = 0, scaled by the measured total.
      rows.push_back((p.row[i] - r.share * p.layer_row[i]).cwiseProduct(prior) / (total_us * r.sd));
      rhs.push_back(0.0);
    }
  }
  const Eigen::Index data_rows = static_cast<Eigen::Index>(rows.size());
  Eigen::MatrixXd A(data_rows + n, n);
  Eigen::VectorXd b(data_rows + n);
  for (Eigen::Index i = 0; i < data_rows; ++i) {
    A.row(i) = rows[static_cast<size_t>(i)].transpose();
    b[i] = rhs[static_cast<size_t>(i)];
  }
  for (Eigen::Index k = 0; k < n; ++k) {
    const double sd = device.coefficients[static_cast<size_t>(k)].rel_sd;
    A.row(data_rows + k) = Eigen::RowVectorXd::Unit(n, k) / sd;
    b[data_rows + k] = 1.0 / sd;
  }
  // Bounds m >= lo (lo_k = min_value_k / prior_k, physics' fastest rate; else 0): solve for
  // y = m - lo >= 0.
  Eigen::VectorXd lo(n);
  for (Eigen::Index k = 0; k < n; ++k)
    lo[k] = device.coefficients[static_cast<size_t>(k)].min_value / prior[k];
  Solved s;
  Eigen::VectorXd m = lo + nnls(A, b - A * lo);
  s.theta = m.cwiseProduct(prior);
  s.normal_inverse = (A.transpose() * A).inverse();
  const Eigen::MatrixXd Ad = A.topRows(data_rows);
  s.effective_parameters = (s.normal_inverse * Ad.transpose() * Ad).trace();
  return s;
}

// The fit with overlap: alternate between assigning each timed layer's shorter side (from the
// coefficients so far; the priors first) and the linear fit under that assignment, until the
// assignment repeats (at most kMaxRegimePasses fits; a cycle keeps the last). Without overlap it
// is one linear fit. Shares use their ops' unscaled rows: a profile share is busy time.
constexpr int kMaxRegimePasses = 8;

Solved solve(const std::vector<MeasurementRecord>& records, const Prepared& p, const DeviceSpec& device,
             const std::vector<bool>& use) {
  const double f = device.structure.overlap();
  if (f <= 0) return solve_linear(records, p, device, use, p.row);
  const std::vector<Side> sides = coefficient_sides(device);
  Eigen::VectorXd theta = prior_theta(device);
  std::vector<bool> shorter, last;
  std::vector<Eigen::VectorXd> timing_row = p.row;
  Solved s;
  for (int pass = 0; pass < kMaxRegimePasses; ++pass) {
    shorter.clear();
    for (size_t i = 0; i < records.size(); ++i) {
      if (records[i].kind != Kind::kLayerTime) continue;
      const SideScale sc = side_scale(sides, f, p.row[i], theta);
      shorter.push_back(sc.memory_shorter);
      timing_row[i] = effective_row(sides, sc, p.row[i]);
    }
    if (pass > 0 && shorter == last) break;
    s = solve_linear(records, p, device, use, timing_row);
    theta = s.theta;
    last = shorter;
  }
  return s;
}

// A layer's time row under `theta`: the effective row of its raw row (costmodel/overlap.h).
Eigen::VectorXd time_row(const DeviceSpec& device, const Eigen::VectorXd& raw, const Eigen::VectorXd& theta) {
  if (device.structure.overlap() <= 0) return raw;
  return effective_row(coefficient_sides(device), device.structure.overlap(), raw, theta);
}

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

namespace {

// What of the device enters the fit: its name, channel padding, feature version and every
// coefficient's definition and prior.
std::string device_definition_text(const DeviceSpec& device) {
  std::string s = "device " + device.name + " pad " + std::to_string(device.channel_pad) + " features " +
                  std::to_string(kFeatureVersion) + "\n" + to_text(device.structure) + " hypothesis " +
                  device.hypothesis + "\n";
  for (const CoefficientSpec& k : device.coefficients) {
    s += k.name + " " + to_string(k.term) + " " + num(k.prior) + " " + num(k.rel_sd) + " " + num(k.min_value);
    for (OpClass c : k.classes) s += std::string(" ") + to_string(c);
    for (model::Precision p : k.precisions) s += std::string(" ") + model::to_string(p);
    // (a unit other than serial only: the hashes of cost models 1-2 had none)
    if (k.unit != Unit::kSerial) s += std::string(" unit ") + to_string(k.unit);
    s += "\n";
  }
  return s;
}

}  // namespace

std::string data_hash(const std::vector<MeasurementRecord>& records, const DeviceSpec& device) {
  return hex(fnv1a(canonical_text(records) + device_definition_text(device)), 16);
}

std::string source_hash(const std::vector<std::string>& file_bytes, const DeviceSpec& device) {
  std::string s;
  for (const std::string& b : file_bytes) s += "file " + std::to_string(b.size()) + "\n" + b;
  return hex(fnv1a(s + device_definition_text(device)), 16);
}

Eigen::VectorXd fit_coefficients(const std::vector<MeasurementRecord>& records, const DeviceSpec& device) {
  Prepared p = prepare(records, device);
  return solve(records, p, device, std::vector<bool>(records.size(), true)).theta;
}

SubsetFits fit_subsets(const std::vector<MeasurementRecord>& records, const DeviceSpec& device,
                       const std::vector<std::vector<bool>>& masks) {
  Prepared p = prepare(records, device);
  const Eigen::VectorXd prior = prior_theta(device);
  SubsetFits out;
  out.rows = p.row;
  out.layer_rows = p.layer_row;
  out.sides = coefficient_sides(device);
  out.overlap = device.structure.overlap();
  for (const std::vector<bool>& use : masks) {
    Solved s = solve(records, p, device, use);
    out.theta.push_back(s.theta);
    out.covariance.push_back(prior.asDiagonal() * s.normal_inverse * prior.asDiagonal());
  }
  return out;
}

FitReport calibrate(const std::vector<MeasurementRecord>& records, const DeviceSpec& device,
                    const std::vector<std::string>& data_files) {
  int timings = 0;
  for (const auto& r : records) timings += r.kind == Kind::kLayerTime;
  if (timings == 0) throw Error("calibrate: no layer timing among the measurements");
  Prepared p = prepare(records, device);
  FitReport rep;
  Calibration& c = rep.calibration;
  // 1. The fit on everything.
  Solved all = solve(records, p, device, std::vector<bool>(records.size(), true));
  const Eigen::VectorXd prior = prior_theta(device);
  c.theta = all.theta;
  c.covariance = prior.asDiagonal() * all.normal_inverse * prior.asDiagonal();
  c.covariance = (0.5 * (c.covariance + c.covariance.transpose())).eval();  // exactly symmetric, as saved
  c.effective_parameters = all.effective_parameters;
  // 2. Each measurement's fitted value and residual.
  for (size_t i = 0; i < records.size(); ++i) {
    const MeasurementRecord& r = records[i];
    FitRow row;
    row.record = &r;
    if (r.kind == Kind::kLayerTime) {
      row.measured = r.ms;
      row.fitted = time_row(device, p.row[i], c.theta).dot(c.theta) / 1e3;
      row.sd = r.sd * r.ms;
    } else {
      row.measured = r.share;
      row.fitted = p.row[i].dot(c.theta) / p.layer_row[i].dot(c.theta);  // of the busy time
      row.sd = r.sd;
    }
    row.residual = row.fitted - row.measured;
    rep.rows.push_back(row);
  }
  // 3. Leave-one-out over the timings: refit without the timing and without the shares of the
  //    same layer (their equations carry its measured total), then predict it.
  std::vector<double> abs_err;
  double sq = 0;
  std::vector<HeldOutError> held;
  // Each timed graph's time composition under the fit on everything (costmodel/discrepancy.h).
  std::map<std::string, Eigen::VectorXd> composition_of;
  std::map<std::string, std::pair<double, int>> residual_of;  // summed relative residual, count
  for (size_t i = 0; i < records.size(); ++i)
    if (records[i].kind == Kind::kLayerTime) {
      const Eigen::VectorXd row = time_row(device, p.row[i], c.theta);
      composition_of[p.key[i]] = composition(row, c.theta);
      const double fitted_ms = row.dot(c.theta) / 1e3;
      auto& [sum, n] = residual_of[p.key[i]];
      sum += fitted_ms > 0 ? records[i].ms / fitted_ms - 1 : 0.0;
      ++n;
    }
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].kind != Kind::kLayerTime) continue;
    std::vector<bool> use(records.size(), true);
    for (size_t j = 0; j < records.size(); ++j)
      if (j == i || (records[j].kind == Kind::kOpShare && p.key[j] == p.key[i])) use[j] = false;
    Solved s = solve(records, p, device, use);
    LooRow l;
    l.record = &records[i];
    l.measured_ms = records[i].ms;
    const Eigen::VectorXd row = time_row(device, p.row[i], s.theta);
    l.predicted_ms = row.dot(s.theta) / 1e3;
    l.rel_error = (l.predicted_ms - l.measured_ms) / l.measured_ms;
    rep.loo.push_back(l);
    abs_err.push_back(std::fabs(l.rel_error));
    sq += l.rel_error * l.rel_error;
    HeldOutError h;
    h.rel_error = l.rel_error;
    const Eigen::VectorXd scaled = row.cwiseProduct(prior);  // the covariance is in multiplier space
    h.coef_rel_sd = l.predicted_ms > 0 ? std::sqrt(std::max(0.0, scaled.dot(s.normal_inverse * scaled))) / 1e3 / l.predicted_ms : 0;
    held.push_back(h);
  }
  c.loo_count = static_cast<int>(abs_err.size());
  c.loo_median = median(abs_err);
  c.loo_max = *std::max_element(abs_err.begin(), abs_err.end());
  c.loo_rms = std::sqrt(sq / static_cast<double>(abs_err.size()));
  // 4. Interval: the posterior covariance covers the coefficients' uncertainty given the model;
  //    the LOO spread (rms relative error) covers the model's own error on unseen layers.
  c.model_rel_sd = c.loo_rms;
  //    Cost model 3: the model error as a discrepancy that grows with the distance from the
  //    measured graphs (costmodel/discrepancy.h); its far value replaces the LOO rms.
  {
    std::vector<double> sds;
    for (const MeasurementRecord& r : records)
      if (r.kind == Kind::kLayerTime) sds.push_back(r.sd);
    std::vector<Eigen::VectorXd> measured;
    std::vector<double> residual;
    for (const auto& [key, comp] : composition_of) {
      measured.push_back(comp);
      residual.push_back(residual_of[key].first / residual_of[key].second);
    }
    c.discrepancy = estimate_discrepancy(held, median(sds), std::move(measured), std::move(residual));
    c.model_rel_sd = std::sqrt(c.discrepancy.nugget_rel_sd * c.discrepancy.nugget_rel_sd +
                               c.discrepancy.rel_sd * c.discrepancy.rel_sd);
  }
  // 5. Provenance.
  c.date = utc_now();
  c.data_files = data_files;
  for (const CoefficientSpec& k : device.coefficients) c.names.push_back(k.name);
  restamp(c, records, device);
  return rep;
}

void restamp(Calibration& c, const std::vector<MeasurementRecord>& records, const DeviceSpec& device) {
  c.device = device.name;
  c.data_hash = data_hash(records, device);
  std::string ident = c.data_hash;
  for (Eigen::Index k = 0; k < c.theta.size(); ++k) ident += " " + num(c.theta[k]);
  c.id = hex(fnv1a(ident), 8);
}

std::string fit_signature(const std::vector<MeasurementRecord>& records, const DeviceSpec& device) {
  const Prepared p = prepare(records, device);
  std::string s = "overlap " + num(device.structure.overlap()) + "\n";
  const std::vector<Side> sides = coefficient_sides(device);
  for (size_t k = 0; k < device.coefficients.size(); ++k) {
    const CoefficientSpec& c = device.coefficients[k];
    s += c.name + " " + num(c.prior) + " " + num(c.rel_sd) + " " + num(c.min_value) + " " +
         std::to_string(static_cast<int>(sides[k])) + "\n";
  }
  for (size_t i = 0; i < records.size(); ++i) {
    for (Eigen::Index k = 0; k < p.row[i].size(); ++k) s += num(p.row[i][k]) + " ";
    for (Eigen::Index k = 0; k < p.layer_row[i].size(); ++k) s += num(p.layer_row[i][k]) + " ";
    s += "\n";
  }
  return hex(fnv1a(s), 16);
}

Eigen::VectorXd SubsetFits::layer_row(size_t fit, size_t record) const {
  const Eigen::VectorXd& raw = layer_rows[record];
  if (overlap <= 0) return raw;
  return effective_row(sides, overlap, raw, theta[fit]);
}

Calibration prior_calibration(const DeviceSpec& device) {
  Calibration c;
  c.device = device.name;
  for (const CoefficientSpec& k : device.coefficients) c.names.push_back(k.name);
  c.theta = prior_theta(device);
  c.covariance = Eigen::MatrixXd::Zero(c.theta.size(), c.theta.size());
  return c;
}

bool fitted_identically(const Calibration& a, const Calibration& b) {
  // (sizes first: Eigen compares equal-sized matrices only)
  return a.names == b.names && a.theta.size() == b.theta.size() && a.covariance.rows() == b.covariance.rows() &&
         a.covariance.cols() == b.covariance.cols() && a.theta == b.theta && a.covariance == b.covariance &&
         a.model_rel_sd == b.model_rel_sd && a.z == b.z;
}

double model_rel_sd_at(const Calibration& c, const Eigen::VectorXd& row) {
  return c.discrepancy.empty() ? c.model_rel_sd : c.discrepancy.at(row, c.theta).rel_sd;
}

RowPrediction predict_row(const Calibration& c, const DeviceSpec& device, const Eigen::VectorXd& raw_row) {
  RowPrediction p;
  p.row = time_row(device, raw_row, c.theta);
  if (!c.discrepancy.empty()) {
    const Discrepancy::At at = c.discrepancy.at(p.row, c.theta);
    p.row *= 1 + at.correction;
    p.model_rel_sd = at.rel_sd;
  } else {
    p.model_rel_sd = c.model_rel_sd;
  }
  p.ms = p.row.dot(c.theta) / 1e3;
  p.sd_ms = prediction_sd_ms(c, p.row, p.ms, p.model_rel_sd);
  return p;
}

double prediction_sd_ms(const Calibration& c, const Eigen::VectorXd& row, double latency_ms, double model_rel_sd) {
  thread_local Eigen::VectorXd cov_row;  // covariance * row, its storage kept between calls
  cov_row.noalias() = c.covariance * row;
  const double coef_var_ms2 = std::max(row.dot(cov_row), 0.0) / 1e6;
  const double model_sd_ms = model_rel_sd * latency_ms;
  return std::sqrt(coef_var_ms2 + model_sd_ms * model_sd_ms);
}

std::string calibration_document(const Calibration& c, const FitReport* report) {
  std::ostringstream o;
  o << "# Cost-model calibration, written by `layoutx calibrate`; do not edit by hand.\n"
    << "# Coefficients: time per lowered op = dispatch (us) + MB * us_per_mb + MMAC * us_per_mmac.\n"
    << "# Interval of a prediction: latency +- z * sqrt(row' covariance row + (model_rel_sd * latency)^2),\n"
    << "# the coefficients' posterior covariance (ridge toward the priors, weighted by the\n"
    << "# measurements' stated sds) plus the leave-one-out rms relative error as model error;\n"
    << "# z = " << num(kZ90) << ": a " << num(100 * kIntervalLevel) << "% two-sided normal interval.\n";
  o << "version: " << kCalibrationVersion << "\n";
  o << "feature_version: " << kFeatureVersion << "\n";
  o << "device: " << c.device << "\n";
  o << "date: \"" << c.date << "\"\n";
  o << "data_hash: \"" << c.data_hash << "\"\n";
  o << "id: \"" << c.id << "\"\n";
  o << "data_files:";
  if (c.data_files.empty()) o << " []";
  o << "\n";
  for (const auto& f : c.data_files) o << "  - \"" << f << "\"\n";
  if (!c.source_hash.empty()) o << "source_hash: \"" << c.source_hash << "\"\n";
  o << "interval: {z: " << num(c.z) << ", model_rel_sd: " << num(c.model_rel_sd) << "}\n";
  if (!c.discrepancy.empty()) {
    const Discrepancy& d = c.discrepancy;
    o << "# Model error sd of a graph, relative: sqrt(nugget^2 + rel_sd^2 * min(1, d / distance_scale)), d the\n"
      << "# distance of its time composition from the nearest measured graph's (costmodel/discrepancy.h).\n";
    o << "discrepancy: {nugget_rel_sd: " << num(d.nugget_rel_sd) << ", rel_sd: " << num(d.rel_sd)
      << ", distance_scale: " << num(d.distance_scale) << "}\n";
    o << "measured_graphs:  # per measured graph: measured / fitted - 1, the fraction of its time on each coefficient\n";
    for (size_t j = 0; j < d.measured.size(); ++j) {
      o << "  - {residual: " << num(d.residual[j]) << ", composition: [";
      for (Eigen::Index k = 0; k < d.measured[j].size(); ++k) o << (k ? ", " : "") << num(d.measured[j][k]);
      o << "]}\n";
    }
  }
  o << "effective_parameters: " << num(c.effective_parameters) << "\n";
  o << "coefficients:\n";
  for (Eigen::Index k = 0; k < c.theta.size(); ++k)
    o << "  - {name: " << c.names[static_cast<size_t>(k)] << ", value: " << num(c.theta[k]) << "}\n";
  o << "covariance:  # symmetric: row i holds columns 0..i\n";
  for (Eigen::Index i = 0; i < c.covariance.rows(); ++i) {
    o << "  - [";
    for (Eigen::Index j = 0; j <= i; ++j) o << (j ? ", " : "") << num(c.covariance(i, j));
    o << "]\n";
  }
  o << "loo: {count: " << c.loo_count << ", median_abs_rel_error: " << num(c.loo_median)
    << ", max_abs_rel_error: " << num(c.loo_max) << ", rms_rel_error: " << num(c.loo_rms) << "}\n";
  if (report) {
    o << "# Leave-one-out, per timing: id, measured ms, predicted ms, relative error\n";
    for (const LooRow& l : report->loo)
      o << "#   " << l.record->id << "  " << num(l.measured_ms) << "  " << num(l.predicted_ms) << "  "
        << num(l.rel_error) << "\n";
  }
  return o.str();
}

void save_calibration(const Calibration& c, const FitReport* report, const std::string& path) {
  write_file_atomically(path, calibration_document(c, report));
}

namespace {

// `discrepancy:` and `measured_graphs:` (both or neither; files of cost models 1-2 have none).
void parse_discrepancy(MapReader& top, const std::string& path, Eigen::Index n, Discrepancy& d, ErrorList& errors) {
  YAML::Node dn = top.child("discrepancy", false);
  YAML::Node mg = top.child("measured_graphs", false);
  const bool has_d = dn.IsDefined() && !dn.IsNull(), has_m = mg.IsDefined() && !mg.IsNull();
  if (has_d != has_m) {
    errors.add(path + ": discrepancy and measured_graphs come together; refit with `layoutx calibrate`");
    return;
  }
  if (!has_d) return;
  MapReader m(path, dn, "discrepancy", errors);
  d.nugget_rel_sd = m.number("nugget_rel_sd", true, 0).value_or(0);
  d.rel_sd = m.number("rel_sd", true, 0).value_or(0);
  d.distance_scale = m.number("distance_scale", true, 1e-9).value_or(1);
  m.finish();
  if (!mg.IsSequence() || mg.size() == 0) {
    errors.add(where(path, mg) + ": measured_graphs: a list of {residual, composition}");
    return;
  }
  for (size_t i = 0; i < mg.size(); ++i) {
    MapReader g(path, mg[i], "measured_graphs[" + std::to_string(i) + "]", errors);
    const double r = g.number("residual", true, -1).value_or(0);
    YAML::Node comp = g.child("composition", true);
    Eigen::VectorXd v(n);
    bool ok = comp.IsSequence() && static_cast<Eigen::Index>(comp.size()) == n;
    for (Eigen::Index k = 0; ok && k < n; ++k) ok = YAML::convert<double>::decode(comp[static_cast<size_t>(k)], v[k]);
    if (!ok) g.error("composition", "expected " + std::to_string(n) + " numbers, one per coefficient");
    g.finish();
    if (ok) {
      d.measured.push_back(v);
      d.residual.push_back(r);
    }
  }
  d.finish();
}

}  // namespace

Calibration load_calibration(const std::string& path, const DeviceSpec& device) {
  return parse_calibration(read_text_file(path), path, device);
}

Calibration parse_calibration(const std::string& text, const std::string& path, const DeviceSpec& device) {
  ErrorList errors;
  YAML::Node root = load_yaml_text(text, path);
  MapReader top(path, root, "", errors);
  Calibration c;
  top.integer("version", true, kCalibrationVersion, kCalibrationVersion);
  top.integer("feature_version", true, kFeatureVersion, kFeatureVersion);
  c.device = top.string("device", true).value_or("");
  c.date = top.string("date", true).value_or("");
  c.data_hash = top.string("data_hash", true).value_or("");
  c.id = top.string("id", true).value_or("");
  c.source_hash = top.string("source_hash", false).value_or("");
  YAML::Node files = top.child("data_files", false);
  if (files.IsDefined() && files.IsSequence())
    for (const auto& f : files) c.data_files.push_back(f.Scalar());
  YAML::Node iv = top.child("interval", true);
  if (iv.IsDefined() && !iv.IsNull()) {
    MapReader m(path, iv, "interval", errors);
    c.z = m.number("z", true, 0).value_or(kZ90);
    // One interval level (costmodel/predictor.h): a mixture backs its members' sds out of their
    // intervals with kZ90, and every printed interval says 90%.
    if (c.z != kZ90)
      m.error("z", num(c.z) + ", but every interval layoutx computes is at " + num(100 * kIntervalLevel) + "% (z " +
                       num(kZ90) + ")");
    c.model_rel_sd = m.number("model_rel_sd", true, 0).value_or(0);
    m.finish();
  }
  c.effective_parameters = top.number("effective_parameters", false, 0).value_or(0);
  const Eigen::Index n = static_cast<Eigen::Index>(device.coefficients.size());
  parse_discrepancy(top, path, n, c.discrepancy, errors);
  c.theta = Eigen::VectorXd::Zero(n);
  c.covariance = Eigen::MatrixXd::Zero(n, n);
  YAML::Node coefs = top.child("coefficients", true);
  if (coefs.IsDefined() && !coefs.IsNull()) {
    if (!coefs.IsSequence() || static_cast<Eigen::Index>(coefs.size()) != n) {
      errors.add(where(path, coefs) + ": coefficients: expected " + std::to_string(n) + " entries (device " +
                 device.name + "); refit with `layoutx calibrate`");
    } else {
      for (Eigen::Index k = 0; k < n; ++k) {
        MapReader m(path, coefs[static_cast<size_t>(k)], "coefficients[" + std::to_string(k) + "]", errors);
        std::string name = m.string("name", true).value_or("");
        const std::string& want = device.coefficients[static_cast<size_t>(k)].name;
        if (name != want) m.error("name", "expected '" + want + "' (device " + device.name + "), got '" + name + "'");
        c.names.push_back(name);
        c.theta[k] = m.number("value", true, 0).value_or(0);
        m.finish();
      }
    }
  }
  YAML::Node cov = top.child("covariance", true);
  if (cov.IsDefined() && !cov.IsNull()) {
    // The lower triangle (what calibration_document writes: row i has i + 1 entries) or, as
    // older files have it, the whole matrix (every row n entries; read as written).
    bool ok = cov.IsSequence() && static_cast<Eigen::Index>(cov.size()) == n;
    const bool lower = ok && n > 1 && cov[0].IsSequence() && cov[0].size() == 1;
    for (Eigen::Index i = 0; ok && i < n; ++i) {
      const YAML::Node& r = cov[static_cast<size_t>(i)];
      const Eigen::Index cols = lower ? i + 1 : n;
      ok = r.IsSequence() && static_cast<Eigen::Index>(r.size()) == cols;
      for (Eigen::Index j = 0; ok && j < cols; ++j)  // decode, not as<>: a bad number is this error, not yaml-cpp's
        ok = YAML::convert<double>::decode(r[static_cast<size_t>(j)], c.covariance(i, j));
      for (Eigen::Index j = 0; ok && lower && j < i; ++j) c.covariance(j, i) = c.covariance(i, j);
    }
    if (!ok)
      errors.add(where(path, cov) + ": covariance: must be a symmetric " + std::to_string(n) + "x" + std::to_string(n) +
                 " matrix: its lower triangle (row i with i + 1 entries) or every row with " + std::to_string(n));
  }
  YAML::Node loo = top.child("loo", true);
  if (loo.IsDefined() && !loo.IsNull()) {
    MapReader m(path, loo, "loo", errors);
    c.loo_count = static_cast<int>(m.integer("count", true, 0, std::numeric_limits<int>::max()).value_or(0));
    c.loo_median = m.number("median_abs_rel_error", true, 0).value_or(0);
    c.loo_max = m.number("max_abs_rel_error", true, 0).value_or(0);
    c.loo_rms = m.number("rms_rel_error", true, 0).value_or(0);
    m.finish();
  }
  top.finish();
  if (c.device != device.name && !c.device.empty())
    errors.add(path + ": device: calibration is for '" + c.device + "', not '" + device.name + "'");
  errors.throw_if_any();
  return c;
}

}  // namespace layoutx::costmodel
