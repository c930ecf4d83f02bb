// A layer graph's features under a device spec's structure: the lowered ops and their features
// (costmodel/features.h) plus the graph-level ones: one context-binary execute per graph, and
// the cache-sized live set (costmodel/live_set.h) against the VTCM budget. Plain data; the
// coefficients that price them are the calibration's (costmodel/cost_model.h).
#pragma once
#include <Eigen/Dense>

#include <cstdint>
#include <vector>

#include "costmodel/device_spec.h"
#include "costmodel/features.h"
#include "costmodel/lowering.h"
#include "model/graph.h"

namespace layoutx::costmodel {

struct LayerFeatures {
  std::vector<LoweredOp> ops;   // lowered (explicit softmax folded into one op if the structure says so)
  std::vector<OpFeatures> op_features;
  model::Precision precision = model::Precision::kFp16;
  double graphs = 1;           // context-binary executes: one per layer graph
  double peak_live_bytes = 0;  // cache-sized tensors alive at once (tiled bytes)
  double spill_bytes = 0;      // peak_live_bytes above the VTCM budget (0 without a budget)
  double weight_bytes = 0;     // weight bytes the projections stream (as featurized)
  // Weight bytes streamed while the live set is over budget (all of them if it is, else 0):
  // the feature of the stall hypothesis (the weights lose their double-buffered half of VTCM).
  double stall_weight_bytes = 0;
};

// The cache-sized graph inputs (tiled bytes >= live_min_kb) that an op other than a copy
// (Concat, Slice, Convert, Output) reads directly, through views: what Structure::
// relayout_cache_inputs re-lays. Empty in a graph whose every cache input is copied first.
std::vector<model::Vertex> cache_inputs_read_in_place(const model::LayerGraph& g, int channel_pad, double live_min_kb);

// Lowers `g`, featurizes its ops and computes the graph-level features under device.structure:
// finish_layer_features(featurize_ops(g, device), g, device).
LayerFeatures featurize_layer(const model::LayerGraph& g, const DeviceSpec& device);
// Structure head_chains 0 (a hypothesis): a per-head graph is priced as its grouped twin, the
// same layer and variant with heads=grouped (featurize_layer and the featurization cache do so).
bool priced_as_grouped(const model::LayerGraph& g, const Structure& s);
model::LayerGraph grouped_twin(const model::LayerGraph& g);
// Its two stages, so that structures differing only in relayout_cache_inputs or the VTCM knee
// lower and featurize a graph once (HypothesisPredictor). featurize_ops: the lowering (explicit
// softmax folded if the structure says so), every op's features and the weight bytes; it does
// not read relayout_cache_inputs or the VTCM terms (vtcm_budget_mb, live_min_kb): the
// featurization cache shares it between structures that differ only there. finish_layer_features: on that, the re-laid
// cache inputs' copies (relayout_cache_inputs), the live set and the budget (vtcm_budget_mb).
LayerFeatures featurize_ops(const model::LayerGraph& g, const DeviceSpec& device);
// The same from `lowered`, lower(g) computed by the caller (structures that fold the softmax or
// not start from one lowering of the graph: lower() is the same for every structure).
LayerFeatures featurize_ops(const model::LayerGraph& g, const DeviceSpec& device, std::vector<LoweredOp> lowered);
// Live-set peaks already computed for one graph, by what live_set reads besides the graph (the
// channel padding, the cache-sized threshold, the re-laid inputs): structures that differ in
// what the live set does not read (the knee, the softmax, 4-bit weights) share one computation.
// Holds graph pointers: use it for the graphs of one featurization only.
struct LivePeakMemo {
  struct Entry {
    const model::LayerGraph* graph;
    int channel_pad;
    int64_t min_bytes;
    std::vector<model::Vertex> relaid;
    int64_t peak_bytes;
  };
  std::vector<Entry> entries;
};
void finish_layer_features(LayerFeatures& f, const model::LayerGraph& g, const DeviceSpec& device,
                           LivePeakMemo* memo = nullptr);

// The VTCM knee's part of the features: spill_bytes and stall_weight_bytes from peak_live_bytes
// and weight_bytes for a budget of `budget_mb` MiB (0: no budget, both 0). featurize_layer
// applies the structure's; a predictor whose hypotheses differ only in the knee featurizes once
// and applies each knee.
void apply_vtcm_budget(LayerFeatures& f, double budget_mb);
// The spill bytes alone: peak_live_bytes above `budget_mb` MiB (0 without a budget).
double spill_bytes(const LayerFeatures& f, double budget_mb);

// The graph-level terms alone (one execute, VTCM spill, weight-stream stall).
void add_graph_design_row(const DeviceSpec& device, const LayerFeatures& f, Eigen::VectorXd& row);
// The layer's design row (sized to device.coefficients): its ops' rows plus the graph terms.
void add_layer_design_row(const DeviceSpec& device, const LayerFeatures& f, Eigen::VectorXd& row);
Eigen::VectorXd layer_design_row(const DeviceSpec& device, const LayerFeatures& f);

}  // namespace layoutx::costmodel
