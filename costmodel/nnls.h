// Non-negative least squares: min ||A x - b||_2 subject to x >= 0 (Lawson & Hanson's
// active-set method, 1974, written from its textbook description).
#pragma once
#include <Eigen/Dense>

namespace layoutx::costmodel {

// Returns the minimizer. Contract: A has at least as many rows as columns after any ridge rows
// the caller appended (so every passive subset is well posed).
Eigen::VectorXd nnls(const Eigen::MatrixXd& A, const Eigen::VectorXd& b, int max_iterations = 500);

}  // namespace layoutx::costmodel
