// Issue #32 item 3: a preset on a model whose GELU is the tanh approximation (Gemma 2/3) builds
// the model's own GELU in every verb that takes --layout; only an explicit --set gelu=erf gives
// the other activation. One test per verb: graph, predict, parity, emit, step.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/cli/run_layoutx.h"
#include "tests/temp_dir.h"

namespace {

using layoutx::test::has;
using layoutx::test::layoutx;
using layoutx::test::Result;

const std::string kGemma = std::string(LAYOUTX_TEST_DIR) + "/fixtures/hf/gemma3-1b.json";
const std::string kRingTanh = "returns=new_entry,gelu=tanh,precision=fp16";

TEST(ModelsOwnGelu, GraphRingOnGemmaBuildsTanh) {
  Result r = layoutx("graph --model " + kGemma + " --layer full --ctx 256 --layout ring --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, "\"variant_key\": \"" + kRingTanh + "\"")) << r.out;
  EXPECT_TRUE(has(r.out, "\"preset\": \"ring\"")) << r.out;
  Result erf = layoutx("graph --model " + kGemma + " --layer full --ctx 256 --layout ring --set gelu=erf --json");
  ASSERT_EQ(erf.status, 0) << erf.out;
  EXPECT_TRUE(has(erf.out, "\"variant_key\": \"returns=new_entry,gelu=erf,precision=fp16\"")) << erf.out;
}

TEST(ModelsOwnGelu, PredictRingOnGemmaCompilesWithoutAGeluChange) {
  Result r = layoutx("predict --model " + kGemma + " --layer full --layout ring");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, kRingTanh)) << r.out;
  EXPECT_TRUE(has(r.out, "(ring)")) << r.out;
  EXPECT_FALSE(has(r.out, "gelu-change")) << r.out;
  // The other activation only when asked for, and then the legality check says so.
  Result erf = layoutx("predict --model " + kGemma + " --layer full --layout ring --set gelu=erf");
  ASSERT_EQ(erf.status, 0) << erf.out;
  EXPECT_TRUE(has(erf.out, "gelu-change")) << erf.out;
}

TEST(ModelsOwnGelu, ParityRingOnGemmaIsTheTanhLayer) {
  // ring against Gemma's ring spelled with its tanh: the same graph, identical outputs.
  Result r = layoutx("parity --model " + kGemma + " --layer full --ctx 64 --steps 2 --exact --json --a " + kRingTanh +
                     " --b ring");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, "\"b\": \"" + kRingTanh + "\"")) << r.out;
  EXPECT_TRUE(has(r.out, "\"max_abs_err\": 0,")) << r.out;
  Result erf = layoutx("parity --model " + kGemma + " --layer full --ctx 64 --steps 2 --exact --json --a ring --b ring "
                       "--set-b gelu=erf");
  ASSERT_EQ(erf.status, 0) << erf.out;
  EXPECT_TRUE(has(erf.out, "\"b\": \"returns=new_entry,gelu=erf,precision=fp16\"")) << erf.out;
  EXPECT_FALSE(has(erf.out, "\"max_abs_err\": 0,")) << erf.out;
}

TEST(ModelsOwnGelu, EmitRingOnGemmaExportsTheTanhLayer) {
  layoutx::test::TempDir d("own-gelu-emit");
  const auto out = d.path() / "bundle";
  Result r = layoutx("emit --model " + kGemma + " --layer full --ctx 64 --layout ring --calibration-samples 1 --json --out " +
                     out.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, "\"variant_key\": \"" + kRingTanh + "\"")) << r.out;
  bool found = false;
  for (const auto& e : std::filesystem::recursive_directory_iterator(out)) {
    if (e.path().filename() != "job.yaml") continue;
    std::ifstream in(e.path());
    const std::string job(std::istreambuf_iterator<char>(in), {});
    EXPECT_TRUE(has(job, kRingTanh)) << job;
    found = true;
  }
  EXPECT_TRUE(found) << "no job.yaml under " << out;
}

TEST(ModelsOwnGelu, StepLayoutRingOnGemmaKeepsTanh) {
  Result r = layoutx("step --model " + kGemma + " --precision fp16 --ctx 4096 --layout sliding=ring,full=ring --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, "\"full\": \"" + kRingTanh + "\"")) << r.out;
  EXPECT_TRUE(has(r.out, "\"sliding\": \"" + kRingTanh + "\"")) << r.out;
  EXPECT_FALSE(has(r.out, "gelu=erf")) << r.out;
}

}  // namespace

namespace {

// The display names are the model's too: on Gemma (tanh GELU) its own layouts read "roll",
// "ring", "score-join", never "+gelu=tanh"; the other activation is named "+gelu=erf" where a
// candidate has it (the explorer's gelu axis, or --set gelu=erf). (Before: select printed
// "ring+gelu=tanh" for Gemma's own ring, and "score-join" for an erf candidate.)
TEST(ModelsOwnGelu, SelectWhatifAndStepNameGemmasLayoutsRelativeToItsOwnGelu) {
  for (const std::string& args : {"select --model " + kGemma + " --no-fidelity --ctx 1024 --candidates",
                                  "select --model " + kGemma + " --no-fidelity --ctx 1024 --json",
                                  "whatif --model " + kGemma + " --no-fidelity",
                                  "step --model " + kGemma + " --ctx 1024"}) {
    Result r = layoutx(args);
    ASSERT_EQ(r.status, 0) << args << "\n" << r.out;
    EXPECT_FALSE(has(r.out, "+gelu=tanh")) << args << "\n" << r.out;  // keys may spell it; names do not
  }
  Result j = layoutx("select --model " + kGemma + " --no-fidelity --ctx 1024 --json");
  EXPECT_TRUE(has(j.out, "\"name\": \"ring")) << j.out;  // "ring" or ring with other axes, never its GELU
  // A candidate with the other activation says so (the same graph key as Spark's default).
  Result c = layoutx("select --model " + kGemma + " --no-fidelity --ctx 1024 --candidates");
  EXPECT_TRUE(has(c.out, "\nring+gelu=erf ")) << c.out;
  Result erf = layoutx("step --model " + kGemma + " --ctx 1024 --layout sliding=ring,full=ring --set full.gelu=erf");
  ASSERT_EQ(erf.status, 0) << erf.out;
  EXPECT_TRUE(has(erf.out, "\nsliding  22  ring    ")) << erf.out;
  EXPECT_TRUE(has(erf.out, "\nfull      4  ring+gelu=erf ")) << erf.out;
  // Spark's names are unchanged: its own GELU is erf, tanh is the other one.
  Result spark = layoutx("step --ctx 1024 --layout sliding=score-join,full=ring --set sliding.gelu=tanh");
  ASSERT_EQ(spark.status, 0) << spark.out;
  EXPECT_TRUE(has(spark.out, "score-join+gelu=tanh")) << spark.out;
}

// regress names a stored Gemma key by Gemma's own GELU too: a timing of Gemma's ring (key
// spelling gelu=tanh, as graph and measure write it) is "ring/fp16", not "ring+gelu=tanh/fp16".
TEST(ModelsOwnGelu, RegressNamesGemmasRowsRelativeToItsOwnGelu) {
  layoutx::test::TempDir d("own-gelu-regress");
  const std::string file = d / "gemma.yaml", db = d / "g.db";
  std::ofstream(file) << "version: 1\nmodel: gemma-3-1b\ndevice: galaxy-s25\nlayer_latency:\n"
                         "  - {id: g, layer: full, context: 1024, variant: {returns: new_entry, gelu: tanh, precision: fp16}, ms: 0.5}\n";
  Result i = layoutx("ingest " + file + " --db " + db);
  ASSERT_EQ(i.status, 0) << i.out;
  Result r = layoutx("regress --db " + db + " --json");
  EXPECT_TRUE(has(r.out, "\"variant_key\": \"returns=new_entry,gelu=tanh,precision=fp16\"")) << r.out;
  Result t = layoutx("regress --db " + db);
  EXPECT_TRUE(has(t.out, " ring/fp16 ")) << t.out;
  EXPECT_FALSE(has(t.out, "gelu=tanh")) << t.out;
}

}  // namespace
