// The op-level predictor: a calibrated per-op cost model over a device spec. Lower the graph,
// price each op with the calibration's coefficients, sum, attach the interval, the roofline
// floor and the converter legality. Nothing in it is HTP-specific: the device YAML says what the
// hardware is (the HTP of galaxy-s25, or the CPU that ONNX Runtime runs on).
#pragma once
#include <iosfwd>
#include <memory>
#include <string>

#include "costmodel/calibration.h"
#include "costmodel/device_spec.h"
#include "costmodel/layer_features.h"
#include "costmodel/legality.h"
#include "costmodel/overlap.h"
#include "costmodel/predictor.h"

namespace layoutx::costmodel {

// A featurized layer's design rows under one coefficient layout (which coefficient each term of
// each op lands in): what pricing reads, independent of the coefficients' values. A mixture
// computes it once per featurization and shares it between members whose device specs lay their
// coefficients out alike (same_coefficient_layout): pricing is then a few products per op.
struct LayerRows {
  struct Slot {
    int index;     // the coefficient
    double value;  // the feature (count, MB or MMAC), as add_design_row adds it
  };
  std::vector<Slot> slots;      // every op's terms in op order (dispatch, byte, mac)
  std::vector<size_t> op_end;   // op i's slots are [op_end[i - 1], op_end[i])
  Eigen::VectorXd graph_row;    // the graph-level terms alone (add_graph_design_row)
  Eigen::VectorXd raw_row;      // the ops' rows summed in op order, plus graph_row: the unscaled layer row
};
LayerRows layer_rows(const DeviceSpec& device, const LayerFeatures& f);
// Whether two specs put every term in the same coefficient (so one LayerRows serves both).
bool same_coefficient_layout(const DeviceSpec& a, const DeviceSpec& b);

class OpLevelPredictor : public Predictor {
 public:
  OpLevelPredictor(DeviceSpec device, Calibration calibration, RuleSet rules)
      : device_(std::move(device)),
        calibration_(std::move(calibration)),
        rules_(std::move(rules)),
        sides_(coefficient_sides(device_)) {}

  Prediction predict(const model::LayerGraph& graph) const override;
  // The parts of predict(): pricing a featurized layer (ops, latency, interval, design row, id;
  // with overlap (costmodel/overlap.h) each op at its side's scale, so the ops sum to the
  // layer's time, and the design row is the effective one;
  // no floor, no legality), the roofline floor, and the converter legality of the graph as
  // written (the unfused lowering: what the converter is given).
  // With `op_ms` the ops' costs go there instead of Prediction::ops, unnamed: entry i is
  // f.ops[i]'s, and one more entry is the graph-level pseudo-op "graph" (a mixture that keeps
  // the featurization names them once instead of a string per op and member).
  Prediction price(const LayerFeatures& f, std::vector<double>* op_ms = nullptr) const;
  // The same from the featurization's rows under this spec's layout (layer_rows(device_spec(), f)).
  Prediction price(const LayerFeatures& f, const LayerRows& rows, std::vector<double>* op_ms = nullptr) const;
  double floor_ms(const model::LayerGraph& graph) const;
  Legality legality(const model::LayerGraph& graph) const;
  Legality legality(const model::LayerGraph& graph, const std::vector<LoweredOp>& unfused_ops) const {
    return check_legality(rules_, graph, unfused_ops);
  }
  std::string device() const override { return device_.name; }
  std::string calibration_id() const override { return calibration_.id; }
  // From the posterior covariance of the coefficients on the difference of the two design
  // rows, plus the model's relative error applied to the difference of the two latencies.
  double difference_half_width_ms(const Prediction& a, const Prediction& b) const override;
  // The calibration's coefficients, their posterior covariance and its model error.
  std::optional<CoefficientBelief> belief() const override;
  std::vector<std::pair<std::string, std::vector<double>>> class_rows(const model::LayerGraph& graph) const override;
  // Latency (ms) of a layer from its cached design row: no graph, no lowering (the explorer's
  // fast path; a dot product with the coefficients).
  double latency_from_row(const std::vector<double>& row) const;

  const DeviceSpec& device_spec() const { return device_; }
  const Calibration& calibration() const { return calibration_; }

 private:
  DeviceSpec device_;
  Calibration calibration_;
  RuleSet rules_;
  std::vector<Side> sides_;  // each coefficient's side (costmodel/overlap.h)
};

// The device's converter legality rules (its calibration.rules), or none.
RuleSet load_device_rules(const DeviceSpec& device);

// The device's own predictor (its saved calibration, checked for freshness): costmodel/predictor_factory.h.

}  // namespace layoutx::costmodel
