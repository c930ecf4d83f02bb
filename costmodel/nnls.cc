#include "costmodel/nnls.h"

#include <vector>

namespace layoutx::costmodel {

namespace {
// Least squares on the passive columns; zero elsewhere.
Eigen::VectorXd solve_passive(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, const std::vector<bool>& passive) {
  std::vector<Eigen::Index> cols;
  for (Eigen::Index j = 0; j < A.cols(); ++j)
    if (passive[static_cast<size_t>(j)]) cols.push_back(j);
  Eigen::MatrixXd Ap(A.rows(), static_cast<Eigen::Index>(cols.size()));
  for (size_t k = 0; k < cols.size(); ++k) Ap.col(static_cast<Eigen::Index>(k)) = A.col(cols[k]);
  Eigen::VectorXd sp = Ap.colPivHouseholderQr().solve(b);
  Eigen::VectorXd s = Eigen::VectorXd::Zero(A.cols());
  for (size_t k = 0; k < cols.size(); ++k) s[cols[k]] = sp[static_cast<Eigen::Index>(k)];
  return s;
}
}  // namespace

Eigen::VectorXd nnls(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, int max_iterations) {
  const Eigen::Index n = A.cols();
  Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
  std::vector<bool> passive(static_cast<size_t>(n), false);
  const double tol = 1e-12 * (1.0 + A.norm() * b.norm());
  for (int outer = 0; outer < max_iterations; ++outer) {
    Eigen::VectorXd w = A.transpose() * (b - A * x);
    Eigen::Index best = -1;
    for (Eigen::Index j = 0; j < n; ++j)
      if (!passive[static_cast<size_t>(j)] && w[j] > tol && (best < 0 || w[j] > w[best])) best = j;
    if (best < 0) break;  // KKT conditions hold
    passive[static_cast<size_t>(best)] = true;
    for (int inner = 0; inner < max_iterations; ++inner) {
      Eigen::VectorXd s = solve_passive(A, b, passive);
      bool feasible = true;
      for (Eigen::Index j = 0; j < n; ++j)
        if (passive[static_cast<size_t>(j)] && s[j] <= 0) feasible = false;
      if (feasible) {
        x = s;
        break;
      }
      // Step from x toward s as far as feasibility allows, then drop the columns that hit zero.
      double alpha = 1.0;
      for (Eigen::Index j = 0; j < n; ++j)
        if (passive[static_cast<size_t>(j)] && s[j] <= 0) alpha = std::min(alpha, x[j] / (x[j] - s[j]));
      x += alpha * (s - x);
      for (Eigen::Index j = 0; j < n; ++j)
        if (passive[static_cast<size_t>(j)] && x[j] <= 1e-15) {
          passive[static_cast<size_t>(j)] = false;
          x[j] = 0;
        }
    }
  }
  return x;
}

}  // namespace layoutx::costmodel
