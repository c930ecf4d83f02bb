// The CLI contract, run as users run it: the layoutx executable, --json documents, and bad input
// that exits 2 with a message naming what is wrong.
#include <gtest/gtest.h>

#include <filesystem>
#include <initializer_list>
#include <string>

#include "tests/cli/cli_run.h"

namespace {

using layoutx::test::has;

struct Result {
  int status = -1;
  std::string out;  // stdout and stderr together
};

Result layoutx(const std::string& args) {
  auto r = ::layoutx::test::run_layoutx(std::filesystem::current_path(), args);
  return {r.status, r.out + r.err};
}

// Every field of `keys` appears as a JSON key in `out`.
void expect_fields(const std::string& out, std::initializer_list<const char*> keys) {
  for (const char* k : keys) EXPECT_TRUE(has(out, std::string("\"") + k + "\"")) << k;
}

TEST(Cli, SelectJsonHasTheContractFields) {
  Result r = layoutx("select --precision w4a16 --ctx 4096 --no-fidelity --json");
  ASSERT_EQ(r.status, 0) << r.out;
  expect_fields(r.out, {"choices", "layer", "preset", "axes", "variant_key", "latency_ms", "interval_ms", "runner_up",
                        "margin_ms", "tie", "step_ms", "all_full_ms", "all_roll_ms", "speedup_vs_all_full"});
}

TEST(Cli, StepSweepJsonHasPointsAndCrossover) {
  Result r = layoutx("step --precision fp16 --sweep-ctx 512:8192 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  expect_fields(r.out, {"points", "crossover_ctx", "speedup_vs_all_full"});
}

TEST(Cli, WhatifAnswersSideBySide) {
  Result r = layoutx("whatif --precision w8a16 --no-fidelity --json");
  ASSERT_EQ(r.status, 0) << r.out;
  expect_fields(r.out, {"current", "question", "difference"});
}

TEST(Cli, BadInputExitsTwoWithAMessage) {
  struct Case {
    const char* args;
    const char* message;
  } cases[] = {
      {"whatif --no-fidelity --set sliding.colour=red", "unknown axis 'colour'"},
      {"whatif --no-fidelity --set sliding.returns=ring", "returns: unknown value 'ring' (allowed: window, new_entry)"},
      {"step --ctx 256", "ctx: 256 is below the sliding window"},
      {"graph --layout ring --set new_score=mul_reducesum", "applies only with join=scores"},
      {"predict --device nope", "--device: no calibrated cost model for 'nope'"},
  };
  for (const auto& c : cases) {
    Result r = layoutx(c.args);
    EXPECT_EQ(r.status, 2) << c.args;
    EXPECT_TRUE(has(r.out, c.message)) << c.args << "\n" << r.out;
  }
  Result llama = layoutx(std::string("whatif --no-fidelity --model ") + LAYOUTX_TEST_DIR +
                      "/fixtures/hf/llama3.2-1b.json --set sliding.returns=window");
  EXPECT_EQ(llama.status, 2);
  EXPECT_TRUE(has(llama.out, "has no sliding layers")) << llama.out;
}

}  // namespace
