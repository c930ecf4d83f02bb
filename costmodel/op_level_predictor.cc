#include "costmodel/op_level_predictor.h"

#include <cmath>
#include <ostream>

#include "costmodel/cost_model.h"
#include "costmodel/features.h"
#include "costmodel/layer_features.h"
#include "costmodel/lowering.h"
#include "model/analysis.h"
#include "support/error.h"
#include "support/paths.h"

namespace layoutx::costmodel {

Prediction OpLevelPredictor::predict(const model::LayerGraph& graph) const {
  // 1. Lower to HTP ops and featurize them (and the graph-level features).
  const LayerFeatures lf = featurize_layer(graph, device_);
  Prediction p = price(lf);
  p.floor_ms = floor_ms(graph);
  // Legality of the graph as written; the lowering is reused unless it folded ops.
  p.legality = device_.structure.fuse_explicit_softmax() ? legality(graph) : check_legality(rules_, graph, lf.ops);
  return p;
}

LayerRows layer_rows(const DeviceSpec& device, const LayerFeatures& f) {
  // The same terms, in the same order, as add_design_row and add_graph_design_row, so that the
  // sums below are the ones layer_design_row computes (bit for bit).
  LayerRows r;
  const auto n = static_cast<Eigen::Index>(device.coefficients.size());
  r.slots.reserve(3 * f.op_features.size());
  r.op_end.reserve(f.op_features.size());
  r.raw_row = Eigen::VectorXd::Zero(n);
  for (const OpFeatures& of : f.op_features) {
    auto one = [&](Term t, double value) {
      const int i = device.index(of.op_class, of.precision, t);
      if (i < 0) return;
      r.slots.push_back({i, value});
      r.raw_row[i] += value;
    };
    one(Term::kDispatch, of.count);
    one(Term::kByte, of.bytes / 1e6);
    one(Term::kMac, of.macs / 1e6);
    r.op_end.push_back(r.slots.size());
  }
  r.graph_row = Eigen::VectorXd::Zero(n);
  add_graph_design_row(device, f, r.graph_row);
  r.raw_row += r.graph_row;
  return r;
}

bool same_coefficient_layout(const DeviceSpec& a, const DeviceSpec& b) {
  if (a.coefficients.size() != b.coefficients.size() || a.index_table.empty() || a.index_table != b.index_table)
    return false;
  for (Term t : {Term::kGraph, Term::kSpill, Term::kStall})
    for (model::Precision p : {model::Precision::kFp16, model::Precision::kW8A16, model::Precision::kW4A16})
      if (a.graph_index(t, p) != b.graph_index(t, p)) return false;
  return true;
}

Prediction OpLevelPredictor::price(const LayerFeatures& lf, std::vector<double>* op_ms) const {
  return price(lf, layer_rows(device_, lf), op_ms);
}

Prediction OpLevelPredictor::price(const LayerFeatures& lf, const LayerRows& rows, std::vector<double>* op_ms) const {
  Prediction p;
  const std::vector<LoweredOp>& ops = lf.ops;
  // 2. Price each op with the calibrated coefficients; the layer is their sum plus the
  //    graph-level terms (one execute, VTCM spill or stall), reported as the pseudo-op "graph".
  //    With overlap, the shorter side's coefficients are scaled first (costmodel/overlap.h).
  // Every member of a mixture is priced here for every graph: the scaled coefficients and the
  // row below live in buffers that keep their storage between calls (the same sums as
  // scaled_theta and effective_row, element by element; no allocation per priced member).
  thread_local Eigen::VectorXd scaled, total_row;
  const Eigen::VectorXd* theta = &calibration_.theta;
  const double overlap = device_.structure.overlap();
  SideScale scale;
  if (overlap > 0) {
    scale = side_scale(sides_, overlap, rows.raw_row, calibration_.theta);
    scale_by_side(sides_, scale, calibration_.theta, scaled);
    theta = &scaled;
  }
  if (op_ms) {
    op_ms->clear();
    op_ms->reserve(ops.size() + 1);
  } else {
    p.ops.reserve(ops.size() + 1);
  }
  size_t s = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    double us = 0;  // as add_design_row_priced sums it
    for (; s < rows.op_end[i]; ++s) us += rows.slots[s].value * (*theta)[rows.slots[s].index];
    const double ms = us / 1e3;
    if (op_ms) op_ms->push_back(ms);
    else p.ops.push_back({ops[i].name, kind_text(ops[i]), to_string(ops[i].op_class), ms});
    p.latency_ms += ms;
  }
  const double graph_ms = rows.graph_row.dot(*theta) / 1e3;
  if (op_ms) op_ms->push_back(graph_ms);
  else if (graph_ms != 0) p.ops.push_back({"graph", "Graph", "graph", graph_ms});
  p.latency_ms += graph_ms;
  if (overlap > 0) scale_by_side(sides_, scale, rows.raw_row, total_row);
  else total_row = rows.raw_row;
  // 3. The discrepancy known at the measured graphs (costmodel/discrepancy.h): the layer's time
  //    scaled by 1 + its correction (ops and row alike, so they still sum to it).
  double model_rel_sd = calibration_.model_rel_sd;
  if (!calibration_.discrepancy.empty()) {
    const Discrepancy::At at = calibration_.discrepancy.at(total_row, calibration_.theta);
    const double f = 1 + at.correction;
    if (op_ms)
      for (double& ms : *op_ms) ms *= f;
    else
      for (OpCost& c : p.ops) c.ms *= f;
    p.latency_ms *= f;
    total_row *= f;
    model_rel_sd = at.rel_sd;
  }
  // 4. Interval from the calibration's uncertainty (the model error computed once above).
  const double half = calibration_.z * prediction_sd_ms(calibration_, total_row, p.latency_ms, model_rel_sd);
  p.low_ms = std::max(0.0, p.latency_ms - half);
  p.high_ms = p.latency_ms + half;
  p.calibration_id = calibration_.id;
  p.design_row.assign(total_row.data(), total_row.data() + total_row.size());
  return p;
}

std::vector<std::pair<std::string, std::vector<double>>> OpLevelPredictor::class_rows(
    const model::LayerGraph& graph) const {
  const LayerFeatures lf = featurize_layer(graph, device_);
  const auto n = calibration_.theta.size();
  std::vector<std::pair<std::string, Eigen::VectorXd>> rows;  // in first-seen order
  auto row_of = [&](const std::string& name) -> Eigen::VectorXd& {
    for (auto& [k, r] : rows)
      if (k == name) return r;
    rows.emplace_back(name, Eigen::VectorXd::Zero(n));
    return rows.back().second;
  };
  for (size_t i = 0; i < lf.ops.size(); ++i) add_design_row(device_, lf.op_features[i], row_of(to_string(lf.ops[i].op_class)));
  Eigen::VectorXd g = Eigen::VectorXd::Zero(n);
  add_graph_design_row(device_, lf, g);
  if (g.cwiseAbs().sum() > 0) row_of("graph") = g;
  std::vector<std::pair<std::string, std::vector<double>>> out;
  for (auto& [k, r] : rows) out.emplace_back(k, std::vector<double>(r.data(), r.data() + r.size()));
  return out;
}

double OpLevelPredictor::floor_ms(const model::LayerGraph& graph) const {
  // Roofline floor: the bytes that must cross DRAM each token (every weight once, the
  // boundary inputs read, the boundary outputs written) at peak bandwidth.
  const double floor_bytes = static_cast<double>(model::weight_and_boundary_bytes(graph));
  return floor_bytes / device_.dram_bytes_per_us() / 1e3;
}

Legality OpLevelPredictor::legality(const model::LayerGraph& graph) const {
  return check_legality(rules_, graph, lower(graph));
}

double OpLevelPredictor::difference_half_width_ms(const Prediction& a, const Prediction& b) const {
  const auto n = calibration_.theta.size();
  if (a.design_row.size() != static_cast<size_t>(n) || b.design_row.size() != static_cast<size_t>(n))
    return Predictor::difference_half_width_ms(a, b);
  Eigen::VectorXd d(n);
  for (Eigen::Index i = 0; i < n; ++i) d[i] = a.design_row[i] - b.design_row[i];
  // theta is in us; rows are per-op features, so d' cov d is in us^2.
  const double coef_var_ms2 = std::max(d.dot(calibration_.covariance * d), 0.0) / 1e6;
  // The model error of the difference: the larger of the two graphs' (a graph far from the
  // measured ones is less sure of its difference too; costmodel/discrepancy.h).
  const Eigen::Map<const Eigen::VectorXd> ra(a.design_row.data(), n), rb(b.design_row.data(), n);
  const double rel = std::max(model_rel_sd_at(calibration_, ra), model_rel_sd_at(calibration_, rb));
  const double model_sd_ms = rel * std::abs(a.latency_ms - b.latency_ms);
  return calibration_.z * std::sqrt(coef_var_ms2 + model_sd_ms * model_sd_ms);
}

std::optional<CoefficientBelief> OpLevelPredictor::belief() const {
  CoefficientBelief b;
  const auto n = calibration_.theta.size();
  b.mean.assign(calibration_.theta.data(), calibration_.theta.data() + n);
  b.covariance.resize(static_cast<size_t>(n * n));
  Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(b.covariance.data(), n, n) =
      calibration_.covariance;
  b.noise_rel_sd = calibration_.model_rel_sd;
  return b;
}

double OpLevelPredictor::latency_from_row(const std::vector<double>& row) const {
  return Eigen::Map<const Eigen::VectorXd>(row.data(), static_cast<Eigen::Index>(row.size())).dot(calibration_.theta) / 1e3;
}

RuleSet load_device_rules(const DeviceSpec& device) {
  return device.calibration.rules.empty() ? RuleSet{} : load_rules(device_file(device.calibration.rules));
}

}  // namespace layoutx::costmodel
