// How a layer's hardware units combine into its time (cost model 3).
//
// The HTP streams weights from DRAM into VTCM by DMA while the matrix unit (HMX) and the vector
// threads (HVX) compute; a copy on the DMA engine while the weight stream is the bottleneck costs
// little, one on the critical path costs its bytes (htp-facts.md; roofline: Williams et al. 2009;
// Timeloop and LLMCompass take a layer's time as its busiest resource's). Each coefficient names
// the side it occupies (CoefficientSpec::unit, device YAML `unit:`):
//   serial   dispatch and the graph execute: nothing overlaps them;
//   memory   DMA streams (weights, VTCM spill or stall);
//   compute  HMX and HVX work;
//   copy     Concat / Slice / Output copies: on the memory side when Structure::copies_on is dma
//            (the DMA engine moves them), on the compute side when it is vector (HVX threads).
// A layer's time, with f = Structure::overlap in [0, 1]:
//   t = serial + memory + compute - f * min(memory, compute)
// f = 0 is the additive model of cost models 1 and 2; f = 1 the busiest side alone (roofline).
// Given which side is the shorter, t is linear in the coefficients: the shorter side's
// coefficients are scaled by (1 - f). The fit (costmodel/calibration.cc) alternates between that
// assignment and the weighted least squares until the assignment is stable; a prediction's
// design row is the scaled ("effective") row, so t = row . theta and its gradient in theta is
// that row (the interval's delta method).
//
// Op-profile shares stay busy time (cycles summed over threads, profile-formats.md): a share's
// equation uses the ops' unscaled rows, so a copy hidden under the weight stream still shows its
// share in a profile while saving little when removed.
#pragma once
#include <Eigen/Dense>

#include <vector>

#include "costmodel/device_spec.h"

namespace layoutx::costmodel {

enum class Side { kSerial, kMemory, kCompute };

// Each coefficient's side under the spec's structure (copies placed by Structure::copies_on).
std::vector<Side> coefficient_sides(const DeviceSpec& device);

// The scale of each side's coefficients for one layer: the shorter of memory and compute is
// scaled by (1 - overlap) (memory when they tie), the rest by 1.
struct SideScale {
  double memory = 1, compute = 1;
  bool memory_shorter = false;  // which side was scaled (meaningful when overlap > 0)
};
// From the layer's unscaled design row and the coefficients (us units).
SideScale side_scale(const std::vector<Side>& sides, double overlap, const Eigen::VectorXd& raw_row,
                     const Eigen::VectorXd& theta);
// The effective row: raw_row with each coefficient scaled by its side's scale.
Eigen::VectorXd effective_row(const std::vector<Side>& sides, const SideScale& s, const Eigen::VectorXd& raw_row);
// Both at once: the effective row of a layer under `theta`.
Eigen::VectorXd effective_row(const std::vector<Side>& sides, double overlap, const Eigen::VectorXd& raw_row,
                              const Eigen::VectorXd& theta);
// The coefficients scaled by side (theta_k * scale of k's side): an op's row . this is its share
// of the layer's critical path (the ops then sum to the layer's time).
Eigen::VectorXd scaled_theta(const std::vector<Side>& sides, const SideScale& s, const Eigen::VectorXd& theta);
// Both in one: `out` = `v` with each entry scaled by its side's scale (into the caller's storage).
void scale_by_side(const std::vector<Side>& sides, const SideScale& s, const Eigen::VectorXd& v, Eigen::VectorXd& out);

}  // namespace layoutx::costmodel
