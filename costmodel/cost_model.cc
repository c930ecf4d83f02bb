#include "costmodel/cost_model.h"

namespace layoutx::costmodel {

namespace {
// Calls put(slot, feature value) for each term of the op its device prices.
template <class Put>
void for_each_slot(const DeviceSpec& device, const OpFeatures& f, Put&& put) {
  auto one = [&](Term t, double value) {
    const int i = device.index(f.op_class, f.precision, t);
    if (i >= 0) put(i, value);
  };
  one(Term::kDispatch, f.count);
  one(Term::kByte, f.bytes / 1e6);
  one(Term::kMac, f.macs / 1e6);
}
}  // namespace

void add_design_row(const DeviceSpec& device, const OpFeatures& f, Eigen::VectorXd& row) {
  for_each_slot(device, f, [&](int i, double value) { row[i] += value; });
}

double add_design_row_priced(const DeviceSpec& device, const OpFeatures& f, Eigen::VectorXd& row,
                             const Eigen::VectorXd& theta) {
  double us = 0;
  for_each_slot(device, f, [&](int i, double value) {
    row[i] += value;
    us += value * theta[i];
  });
  return us;
}

Eigen::VectorXd design_row(const DeviceSpec& device, const OpFeatures& f) {
  Eigen::VectorXd row = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(device.coefficients.size()));
  add_design_row(device, f, row);
  return row;
}

Eigen::VectorXd design_row(const DeviceSpec& device, const std::vector<OpFeatures>& fs) {
  Eigen::VectorXd row = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(device.coefficients.size()));
  for (const OpFeatures& f : fs) add_design_row(device, f, row);
  return row;
}

Eigen::VectorXd prior_theta(const DeviceSpec& device) {
  Eigen::VectorXd p(static_cast<Eigen::Index>(device.coefficients.size()));
  for (size_t i = 0; i < device.coefficients.size(); ++i) p[static_cast<Eigen::Index>(i)] = device.coefficients[i].prior;
  return p;
}

}  // namespace layoutx::costmodel
