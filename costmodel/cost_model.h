// The model: per lowered op,
//   time_us = dispatch[class,prec] + bytes/1e6 * us_per_mb[class,prec] + macs/1e6 * us_per_mmac[class,prec]
// and a layer's latency is the sum over its lowered ops. Linear in the coefficients, so a
// layer timing or an op share is one linear equation in them (costmodel/calibration.h).
#pragma once
#include <Eigen/Dense>

#include <vector>

#include "costmodel/device_spec.h"
#include "costmodel/features.h"

namespace layoutx::costmodel {

// The op's features placed in coefficient slots: time_us = row.dot(theta), where theta holds
// the coefficients in DeviceSpec::coefficients order and units (us, us/MB, us/MMAC).
Eigen::VectorXd design_row(const DeviceSpec& device, const OpFeatures& f);
// The same, added into `row` (sized to the coefficients): no allocation, for the hot path.
void add_design_row(const DeviceSpec& device, const OpFeatures& f, Eigen::VectorXd& row);
// Adds the op's row into `row` and returns its time row . theta (us), touching only the op's
// (at most three) slots: the pricing hot path.
double add_design_row_priced(const DeviceSpec& device, const OpFeatures& f, Eigen::VectorXd& row,
                             const Eigen::VectorXd& theta);
// Sum of the rows of a set of ops.
Eigen::VectorXd design_row(const DeviceSpec& device, const std::vector<OpFeatures>& fs);
// The priors as a coefficient vector.
Eigen::VectorXd prior_theta(const DeviceSpec& device);

}  // namespace layoutx::costmodel
