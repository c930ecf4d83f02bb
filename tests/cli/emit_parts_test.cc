// What propose's results become on disk: its parts (propose --out, then emit --parts) as one graph
// each with their bundles, and the bundles of the measurements that would settle it
// (propose --settle-out); and what they refuse. The parts' numerics in ONNX Runtime are tests/emit/part_test.cc's.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/cli/run_layoutx.h"
#include "tests/temp_dir.h"

namespace {

using layoutx::test::layoutx;
using layoutx::test::Result;

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

std::string read(const std::filesystem::path& p) {
  std::ifstream f(p);
  return {std::istreambuf_iterator<char>(f), {}};
}

TEST(Cli, EmitPartsWritesEachPartOfAProposalAsOneGraphWithItsBundle) {
  layoutx::test::TempDir tmp("emit-parts");
  const std::string model = std::string(LAYOUTX_TEST_DIR) + "/emit/fixtures/small-hybrid.yaml";
  const std::string file = tmp / "whole.yaml";
  Result p = layoutx("propose --model " + model + " --precision w4a16 --ctx 32 --no-fidelity --settle 0 "
                     "--layers-per-part 2 --out " + file);
  ASSERT_EQ(p.status, 0) << p.out;
  const std::string out = tmp / "parts";
  Result e = layoutx("emit --model " + model + " --select " + file + " --parts --calibration-samples 2 --json --out " + out);
  ASSERT_EQ(e.status, 0) << e.out;
  EXPECT_TRUE(has(e.out, "\"name\": \"layers_0_1\"")) << e.out;
  EXPECT_TRUE(has(e.out, "\"name\": \"layers_2_3\"")) << e.out;
  EXPECT_TRUE(has(e.out, "\"predicted_ms\"")) << e.out;
  // Each part's job names its layers; its inputs are the part's boundary: layer 3's caches, not
  // layer 2's hidden state, which stays inside.
  const std::string job = read(std::filesystem::path(out) / "layers_2_3" / "job.yaml");
  EXPECT_TRUE(has(job, "part: layers_2_3")) << job;
  EXPECT_TRUE(has(job, "{index: 3, type: full,")) << job;
  EXPECT_TRUE(has(job, "name: layer3_k_cache")) << job;
  EXPECT_FALSE(has(job, "name: layer2_hidden_out")) << job;
  EXPECT_TRUE(has(job, "not ingested yet")) << job;
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(out) / "layers_0_1" / "layers_0_1.onnx"));
  // --part: one of them; an unknown one is named with the ones there are.
  Result one = layoutx("emit --model " + model + " --select " + file + " --parts --part layers_2_3 --out " +
                       (tmp / "one"));
  ASSERT_EQ(one.status, 0) << one.out;
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(tmp / "one") / "layers_0_1"));
  Result unknown = layoutx("emit --model " + model + " --select " + file + " --parts --part layers_1_2 --out " +
                           (tmp / "bad"));
  EXPECT_EQ(unknown.status, 2) << unknown.out;
  EXPECT_TRUE(has(unknown.out, "no such part (its parts: layers_0_1, layers_2_3)")) << unknown.out;
  EXPECT_FALSE(std::filesystem::exists(tmp / "bad"));
}

TEST(Cli, EmitPartsRefusesWhatItCannotWriteBeforeWritingAnything) {
  layoutx::test::TempDir tmp("emit-parts-bad");
  const std::string per_type = std::string(LAYOUTX_CONFIG_DIR) + "/layouts/spark-x2.5-1.7b-w4a16-ctx1024.yaml";
  Result no_select = layoutx("emit --parts --out " + (tmp / "a"));
  EXPECT_EQ(no_select.status, 2);
  EXPECT_TRUE(has(no_select.out, "--parts: give the whole-model layout with --select")) << no_select.out;
  Result not_whole = layoutx("emit --parts --select " + per_type + " --out " + (tmp / "b"));
  EXPECT_EQ(not_whole.status, 2);
  EXPECT_TRUE(has(not_whole.out, "no model_layout block")) << not_whole.out;
  Result part_alone = layoutx("emit --part layers_0_0 --layer sliding --out " + (tmp / "c"));
  EXPECT_EQ(part_alone.status, 2);
  EXPECT_TRUE(has(part_alone.out, "--part layers_0_0: needs --parts")) << part_alone.out;
  // Spark's proposal: 5.8 GB of float32 weights, over emit's cap; named before anything is written.
  const std::string file = tmp / "spark.yaml";
  ASSERT_EQ(layoutx("propose --precision w4a16 --ctx 1024 --no-fidelity --settle 0 --out " + file).status, 0);
  Result big = layoutx("emit --parts --select " + file + " --out " + (tmp / "d"));
  EXPECT_EQ(big.status, 2);
  EXPECT_TRUE(has(big.out, "emit one part at a time with --part NAME")) << big.out;
  EXPECT_FALSE(std::filesystem::exists(tmp / "d"));
}

TEST(Cli, ProposeWritesTheBundlesOfTheMeasurementsThatWouldSettleIt) {
  layoutx::test::TempDir tmp("propose-settle");
  const std::string model = std::string(LAYOUTX_TEST_DIR) + "/emit/fixtures/small-hybrid.yaml";
  const std::string dir = tmp / "settle";
  Result r = layoutx("propose --model " + model + " --precision w4a16 --ctx 32 --no-fidelity --settle 2 --json "
                     "--settle-out " + dir);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, "\"bundle\": \"" + dir + "/01-")) << r.out;
  EXPECT_TRUE(has(r.out, "\"bundle\": \"" + dir + "/02-")) << r.out;
  const std::string plan = read(std::filesystem::path(dir) / "plan.yaml");
  EXPECT_TRUE(has(plan, "rank: 2")) << plan;
  EXPECT_FALSE(has(plan, "rank: 3")) << plan;
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(dir) / "submit_all.sh"));
  Result none = layoutx("propose --model " + model + " --ctx 32 --no-fidelity --settle 0 --settle-out " +
                        (tmp / "none"));
  EXPECT_EQ(none.status, 2) << none.out;
  EXPECT_TRUE(has(none.out, "--settle 0 plans no measurements to bundle")) << none.out;
  EXPECT_FALSE(std::filesystem::exists(tmp / "none"));
}

// An exporter's layout priced as given: every choice fixed, nothing searched; the rest of propose's
// answer (the team default beside it, the gain by axis) as usual.
TEST(Cli, ProposeWithEveryChoiceFixedPricesTheGivenLayout) {
  const std::string model = std::string(LAYOUTX_TEST_DIR) + "/emit/fixtures/small-hybrid.yaml";
  Result r = layoutx("propose --model " + model + " --precision w4a16 --ctx 32 --no-fidelity --settle 0 --json "
                     "--layout sliding=ring,full=ring --set full.kv_dtype=u8 --layers-per-part 2 --embed apart --head last");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, "\"partitions_priced\": 1,")) << r.out;
  const size_t proposal = r.out.find("\"proposal\": {");
  const std::string p = r.out.substr(proposal, r.out.find("\"baseline\": {") - proposal);
  EXPECT_TRUE(has(p, "\"full\": \"returns=new_entry,precision=w4a16,kv_dtype=u8\"")) << p;
  EXPECT_TRUE(has(p, "\"layers_per_part\": 2,")) << p;
  EXPECT_TRUE(has(p, "\"embed_in_first_part\": false,")) << p;
  EXPECT_TRUE(has(p, "\"head_in_last_part\": true,")) << p;
  // A fixed layout was chosen by neither the fidelity floor nor the legality rules: said.
  EXPECT_TRUE(has(r.out, "full layout fixed by the question: ring+kv_dtype=u8 (compiles: ")) << r.out;
  Result bad = layoutx("propose --model " + model + " --ctx 32 --no-fidelity --embed middle");
  EXPECT_EQ(bad.status, 2) << bad.out;
  EXPECT_TRUE(has(bad.out, "--embed")) << bad.out;
}

}  // namespace
