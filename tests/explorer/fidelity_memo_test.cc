// The fidelity oracle keeps its figures on disk for the next run of the same build.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "explorer/fidelity_proxy.h"
#include "model/variant.h"
#include "tests/numerics/tiny_layer.h"
#include "tests/temp_dir.h"

namespace layoutx::explorer {
namespace {

// Replaces the saved figure (the value line) of a memo file.
void plant_figure(const std::filesystem::path& file, const std::string& figure) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  in.close();
  ASSERT_EQ(lines.size(), 5u);
  lines[3] = figure;
  std::ofstream out(file, std::ios::trunc);
  for (const auto& l : lines) out << l << '\n';
}

TEST(FidelityMemo, ASecondRunOfTheSameBuildReadsTheFigureAnotherBuildRecomputes) {
  test::TempDir dir("fidelity-memo");
  const auto layer = model::numerics::tiny_layer(model::LayerType::kSliding);
  const model::Variant v = model::Variant{}.set(model::Precision::kW8A16);
  const model::numerics::QuantOptions q;
  auto oracle = [&](int steps, const model::numerics::QuantOptions& quant, const std::string& build) {
    return *make_numerics_oracle(steps, quant, DiskMemo(dir.path(), build))->snr_db(layer, v);
  };
  const double computed = oracle(4, q, "build 1");
  EXPECT_TRUE(std::isfinite(computed));
  const std::filesystem::path file = std::filesystem::directory_iterator(dir.path())->path();
  // A new oracle (a new process) of the same build finds the figure and does not recompute: a
  // planted figure comes back, exactly.
  plant_figure(file, "12.5");
  EXPECT_EQ(oracle(4, q, "build 1"), 12.5);
  // Another history length or calibration seed is another key; another build recomputes.
  model::numerics::QuantOptions other = q;
  other.calibration_seed = q.calibration_seed + 1;
  EXPECT_NE(oracle(4, other, "build 1"), 12.5);
  EXPECT_NE(oracle(5, q, "build 1"), 12.5);
  EXPECT_EQ(oracle(4, q, "build 2"), computed);
  // A figure that does not parse is computed again.
  plant_figure(file, "12.5x");
  EXPECT_EQ(oracle(4, q, "build 2"), computed);
  // And with the memo off, the same figure as ever.
  EXPECT_EQ(*make_numerics_oracle(4, q, DiskMemo(std::nullopt, "build 1"))->snr_db(layer, v), computed);
}

}  // namespace
}  // namespace layoutx::explorer
