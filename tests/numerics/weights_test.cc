#include <gtest/gtest.h>

#include <cmath>

#include "model/builder.h"
#include "model/numerics/weights.h"
#include "support/error.h"
#include "tiny_layer.h"

namespace layoutx::model::numerics {
namespace {

TEST(Weights, ShapesAreTheGraphsWeightShapes) {
  for (LayerType t : {LayerType::kSliding, LayerType::kFull}) {
    const LayerSpec layer = tiny_layer(t);
    const LayerGraph g = build_layer_graph(layer, preset("ring"));
    const auto shapes = weight_shapes(layer);
    EXPECT_EQ(static_cast<size_t>(g.count(OpKind::kWeight)), shapes.size());
    for (Vertex v : g.of_kind(OpKind::kWeight)) EXPECT_EQ(g.op(v).shape, shapes.at(g.op(v).role)) << g.op(v).name;
  }
}

TEST(Weights, SeededScaleAndDeterminism) {
  const LayerSpec layer = tiny_layer(LayerType::kSliding);
  const LayerWeights w = seeded_weights(layer, 9);
  EXPECT_EQ(w.at(Role::kQkv).data, seeded_weights(layer, 9).at(Role::kQkv).data);
  EXPECT_NE(w.at(Role::kQkv).data, seeded_weights(layer, 10).at(Role::kQkv).data);
  for (const auto& [role, t] : w) {
    double sum = 0, sq = 0;
    for (double x : t.data) sum += x, sq += x * x;
    const double n = double(t.size()), mean = sum / n, sd = std::sqrt(sq / n - mean * mean);
    const double want_sd = is_projection(role) ? std::max(0.02, 0.9 / std::sqrt(double(t.shape[0]))) : 0.05;
    const double want_mean = is_projection(role) ? 0.0 : 1.0;
    // 4 standard errors of a sample sd: sd sqrt((kurtosis - 1) / 4n), kurtosis 9 for Student's t
    // with nu = 5 (projections), 3 for the Gaussian norms.
    const double kurtosis = is_projection(role) ? 9.0 : 3.0;
    EXPECT_NEAR(sd, want_sd, 4 * want_sd * std::sqrt((kurtosis - 1) / (4 * n))) << role_name(role);
    EXPECT_NEAR(mean, want_mean, 4 * want_sd / std::sqrt(n)) << role_name(role);
  }
}

// The projections are heavy-tailed (Student's t, nu = 5): far more weights beyond 4 standard
// deviations than a Gaussian's 6.3e-5 (t5: P(|T| > 4 sqrt(5/3)) = 3.6e-3), as trained weights.
TEST(Weights, SeededProjectionsAreHeavyTailed) {
  LayerSpec layer = tiny_layer(LayerType::kSliding);
  layer.hidden = 256;
  layer.intermediate = 512;
  const LayerWeights w = seeded_weights(layer, 3);
  for (Role r : {Role::kQkv, Role::kMlpUp, Role::kMlpDown}) {
    const Tensor<double>& t = w.at(r);
    double sq = 0;
    for (double x : t.data) sq += x * x;
    const double sd = std::sqrt(sq / double(t.size()));
    int64_t beyond = 0;
    for (double x : t.data) beyond += std::fabs(x) > 4 * sd;
    const double fraction = double(beyond) / double(t.size());
    EXPECT_GT(fraction, 1.5e-3) << role_name(r);  // a Gaussian would give 6.3e-5
    EXPECT_LT(fraction, 8e-3) << role_name(r);
  }
}

TEST(Weights, CheckNamesEveryProblem) {
  const LayerSpec layer = tiny_layer(LayerType::kSliding);
  LayerWeights w = seeded_weights(layer, 1);
  w.erase(Role::kMlpUp);
  w[Role::kHeadGate] = Tensor<double>({4, 32});
  try {
    check_weights(layer, w, "ckpt");
    FAIL();
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("ckpt: weight up_proj is missing"), std::string::npos) << m;
    EXPECT_NE(m.find("ckpt: weight g_proj has shape [4,32], the layer needs [32,4]"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace layoutx::model::numerics
