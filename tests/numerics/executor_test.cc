// The executor's op semantics on small hand-built graphs, checked against direct loops.
#include <gtest/gtest.h>

#include <cmath>

#include "model/numerics/executor.h"
#include "support/error.h"

namespace layoutx::model::numerics {
namespace {

// A hand-built graph; inputs bound through the roles hidden_in / k_cache / v_cache, results
// read through hidden_out.
struct Mini {
  LayerGraph lg;
  Vertex add(OpNode n, std::vector<Vertex> ops = {}) {
    Vertex v = boost::add_vertex(n, lg.graph);
    for (size_t i = 0; i < ops.size(); ++i) boost::add_edge(ops[i], v, Operand{int(i)}, lg.graph);
    return v;
  }
  Vertex input(Role r, Shape s) { return add({.name = role_name(r), .kind = OpKind::kInput, .shape = s, .role = r}); }
  Vertex op(OpKind k, Shape s, std::vector<Vertex> ops, int axis = -1) {
    return add({.name = "op" + std::to_string(lg.size()), .kind = k, .shape = s, .axis = axis}, ops);
  }
  void output(Vertex x) {
    add({.name = "out", .kind = OpKind::kOutput, .shape = lg.op(x).shape, .role = Role::kHiddenOut}, {x});
  }
  Tensor<double> run(RoleTensors<double> in) {
    Executor<double> e(lg, {});
    return e.run(in).at(Role::kHiddenOut);
  }
};

Tensor<double> iota(Shape s, double scale = 1.0) {
  Tensor<double> t(s);
  for (int64_t i = 0; i < t.size(); ++i) t[i] = scale * double((i * 7) % 11 - 5);
  return t;
}

TEST(Executor, MatMulBroadcastsBatchAxes) {
  Mini m;
  Vertex a = m.input(Role::kHiddenIn, {2, 3, 4});
  Vertex b = m.input(Role::kKCache, {4, 5});
  m.output(m.op(OpKind::kMatMul, {2, 3, 5}, {a, b}));
  const auto A = iota({2, 3, 4}), B = iota({4, 5}, 0.5);
  const auto C = m.run({{Role::kHiddenIn, A}, {Role::kKCache, B}});
  ASSERT_EQ(C.shape, (Shape{2, 3, 5}));
  for (int bt = 0; bt < 2; ++bt)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 5; ++j) {
        double s = 0;
        for (int k = 0; k < 4; ++k) s += A[(bt * 3 + i) * 4 + k] * B[k * 5 + j];
        EXPECT_DOUBLE_EQ(C[(bt * 3 + i) * 5 + j], s);
      }
}

TEST(Executor, ElementwiseBroadcastsLikeNumpy) {
  Mini m;
  Vertex a = m.input(Role::kHiddenIn, {2, 1, 3});
  Vertex b = m.input(Role::kKCache, {4, 1});
  m.output(m.op(OpKind::kSub, {2, 4, 3}, {a, b}));
  const auto A = iota({2, 1, 3}), B = iota({4, 1}, 0.25);
  const auto C = m.run({{Role::kHiddenIn, A}, {Role::kKCache, B}});
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) EXPECT_DOUBLE_EQ(C[(i * 4 + j) * 3 + k], A[i * 3 + k] - B[j]);
}

TEST(Executor, ConcatAndSliceOnAnyAxis) {
  Mini m;
  Vertex a = m.input(Role::kHiddenIn, {2, 2, 3});
  Vertex b = m.input(Role::kKCache, {2, 1, 3});
  Vertex c = m.op(OpKind::kConcat, {2, 3, 3}, {a, b}, 1);
  Vertex s = m.add({.name = "slice", .kind = OpKind::kSlice, .shape = {2, 2, 3}, .axis = 1, .start = 1, .end = 3}, {c});
  m.output(s);
  const auto A = iota({2, 2, 3}), B = iota({2, 1, 3}, 10);
  const auto C = m.run({{Role::kHiddenIn, A}, {Role::kKCache, B}});
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(C[(i * 2 + 0) * 3 + k], A[(i * 2 + 1) * 3 + k]);  // concat row 1 = a's row 1
      EXPECT_EQ(C[(i * 2 + 1) * 3 + k], B[i * 3 + k]);            // concat row 2 = b
    }
}

TEST(Executor, SoftmaxAndReductionsOverAnAxis) {
  Mini m;
  Vertex a = m.input(Role::kHiddenIn, {2, 3});
  Vertex sm = m.op(OpKind::kSoftmax, {2, 3}, {a}, 0);  // over the first axis
  Vertex mx = m.op(OpKind::kReduceMax, {2, 1}, {a}, -1);
  Vertex sum = m.op(OpKind::kReduceSum, {2, 1}, {a}, 1);
  m.output(m.op(OpKind::kAdd, {2, 3}, {sm, m.op(OpKind::kMul, {2, 1}, {mx, sum})}));
  const Tensor<double> A({2, 3}, {1.0, -2.0, 0.5, 3.0, 4.0, -1.0});
  const auto C = m.run({{Role::kHiddenIn, A}});
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 2; ++i) {
      const double soft = std::exp(A[i * 3 + j]) / (std::exp(A[j]) + std::exp(A[3 + j]));
      const double extra = i == 0 ? 1.0 * (1.0 - 2.0 + 0.5) : 4.0 * (3.0 + 4.0 - 1.0);
      EXPECT_NEAR(C[i * 3 + j], soft + extra, 1e-12);
    }
}

TEST(Executor, GeluForms) {
  for (GeluForm f : {GeluForm::kErf, GeluForm::kTanh}) {
    Mini m;
    Vertex a = m.input(Role::kHiddenIn, {1, 3});
    m.output(m.add({.name = "gelu", .kind = OpKind::kGelu, .shape = {1, 3}, .gelu = f}, {a}));
    const Tensor<double> A({1, 3}, {-1.5, 0.3, 2.0});
    const auto C = m.run({{Role::kHiddenIn, A}});
    for (int i = 0; i < 3; ++i) {
      const double x = A[i];
      const double want = f == GeluForm::kErf
                              ? 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)))
                              : 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
      EXPECT_NEAR(C[i], want, 1e-15);
    }
  }
}

TEST(Executor, ShapeThatDoesNotFitNamesTheOp) {
  Mini m;
  Vertex a = m.input(Role::kHiddenIn, {2, 3});
  Vertex b = m.input(Role::kKCache, {2, 3});
  m.output(m.op(OpKind::kMatMul, {2, 3}, {a, b}));
  try {
    m.run({{Role::kHiddenIn, Tensor<double>({2, 3})}, {Role::kKCache, Tensor<double>({2, 3})}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot multiply [2,3] by [2,3]"), std::string::npos) << e.what();
  }
}

TEST(Executor, UnboundInputAndMissingWeightAreErrors) {
  Mini m;
  Vertex a = m.input(Role::kHiddenIn, {1, 4});
  Vertex w = m.add({.name = "w", .kind = OpKind::kWeight, .shape = {4, 4}, .role = Role::kQkv});
  m.output(m.op(OpKind::kMatMul, {1, 4}, {a, w}));
  EXPECT_THROW(
      {
        try {
          Executor<double> e(m.lg, {});
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("weight q_k_v_proj is missing"), std::string::npos);
          throw;
        }
      },
      Error);
  Executor<double> e(m.lg, {{Role::kQkv, Tensor<double>({4, 4})}});
  EXPECT_THROW(e.run({}), Error);
}

}  // namespace
}  // namespace layoutx::model::numerics
