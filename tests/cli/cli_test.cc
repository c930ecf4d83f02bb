// The CLI contract, run as users run it: the layoutx executable, --json documents, and bad input
// that exits 2 with a message naming what is wrong.
#include <gtest/gtest.h>

#include <sstream>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <initializer_list>
#include <string>
#include <unistd.h>

#include "tests/cli/run_layoutx.h"
#include "tests/temp_dir.h"

namespace {

using layoutx::test::has;
using layoutx::test::layoutx;
using layoutx::test::Result;

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

TEST(Cli, W4a16ChoosesKnownGoodLayoutsAndListsTheContestedScoreJoin) {
  Result r = layoutx("select --precision w4a16 --ctx 1024 --no-fidelity");
  ASSERT_EQ(r.status, 0) << r.out;
  // The untested candidates are named in full (score-join with the exporter forms it is fastest with).
  EXPECT_TRUE(has(r.out, "untested (sliding): score-join")) << r.out;
  EXPECT_TRUE(has(r.out, "untested (full): score-join")) << r.out;
  EXPECT_TRUE(has(r.out, "if it compiles; compiles: contested")) << r.out;
  EXPECT_TRUE(has(r.out, "second export")) << r.out;
  EXPECT_TRUE(has(r.out, "third export")) << r.out;
  Result j = layoutx("select --precision w4a16 --ctx 1024 --no-fidelity --json");
  ASSERT_EQ(j.status, 0) << j.out;
  EXPECT_TRUE(has(j.out, "\"chose_untested\": false")) << j.out;
  EXPECT_TRUE(has(j.out, "\"untested\": [")) << j.out;
  EXPECT_TRUE(has(j.out, "\"compiles\": \"contested\"")) << j.out;
  // Each chosen layout is known to compile (the table's compiles column).
  for (const char* layer : {"\nsliding  21  ", "\nfull      7  "}) {
    const size_t at = r.out.find(layer);
    ASSERT_NE(at, std::string::npos) << layer << r.out;
    const std::string row = r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
    EXPECT_TRUE(has(row, "]  yes ")) << row;
  }
  // A question whose choice is untested says so (the join asked for: which layout the search
  // picks untested moves with the weights).
  Result a = layoutx("whatif --precision w4a16 --no-fidelity --allow-untested --set full.join=scores");
  ASSERT_EQ(a.status, 0) << a.out;
  EXPECT_TRUE(has(a.out, "question's full choice score-join")) << a.out;
  EXPECT_TRUE(has(a.out, "is untested: compiles contested")) << a.out;
}

// propose (issue 35): the proposal and the team's default with the contract's fields, the parts
// covering every layer once; a partition over a device limit is refused naming the limit's key.
TEST(Cli, ProposeComparesTheProposalWithTheTeamsDefaultAndRefusesWhatCannotBeBuilt) {
  Result r = layoutx("propose --precision w4a16 --ctx 4096 --no-fidelity --json");
  ASSERT_EQ(r.status, 0) << r.out;
  expect_fields(r.out, {"proposal", "baseline", "known_good", "ms_per_token", "tokens_per_s", "tokens_per_s_interval",
                        "floor_ms", "parts", "layers", "weight_bytes", "gain_by_axis", "speedup_vs_baseline", "settle",
                        "value_ms_per_step", "partition_at_prior_ends"});
  // The baseline: one layer a graph (28), the embedding and the head apart.
  const size_t base = r.out.find("\"baseline\": {");
  ASSERT_NE(base, std::string::npos);
  EXPECT_TRUE(has(r.out.substr(base, r.out.find("\"known_good\": {") - base), "\"layers_per_part\": 1,")) << r.out;
  // The team default's layer graphs were all timed on the device (ring sliding, key-join full at
  // w4a16): their measured sum is given beside the prediction of the same graphs.
  EXPECT_TRUE(has(r.out.substr(base, r.out.find("\"known_good\": {") - base), "\"measured_layers\": {")) << r.out;
  EXPECT_TRUE(has(r.out, "\"21 x 0.838 ms sliding\"")) << r.out;
  Result t = layoutx("propose --precision w4a16 --ctx 4096 --no-fidelity --settle 0");
  ASSERT_EQ(t.status, 0) << t.out;
  EXPECT_TRUE(has(t.out, "\nproposal ")) << t.out;
  EXPECT_TRUE(has(t.out, "\nteam default ")) << t.out;
  EXPECT_TRUE(has(t.out, "the proposal's parts")) << t.out;
  // propose --out writes the whole-model layout file; step --layout-file prices it back.
  layoutx::test::TempDir tmp("propose");
  const std::string file = tmp / "whole.yaml";
  Result out = layoutx("propose --precision w4a16 --ctx 4096 --no-fidelity --settle 0 --json --out " + file);
  ASSERT_EQ(out.status, 0) << out.out;
  auto number_after = [](const std::string& json, const std::string& key, size_t from = 0) {
    const size_t at = json.find("\"" + key + "\": ", from);
    return at == std::string::npos ? -1.0 : std::stod(json.substr(at + key.size() + 4));
  };
  Result back = layoutx("step --layout-file " + file + " --json");
  ASSERT_EQ(back.status, 0) << back.out;
  EXPECT_NEAR(number_after(back.out, "tokens_per_s", back.out.find("\"whole_step\"")),
              number_after(out.out, "tokens_per_s", out.out.find("\"proposal\"")), 1e-6)
      << back.out;
  EXPECT_TRUE(has(back.out, "\"tokens_per_s_interval\"")) << back.out;
  Result both = layoutx("step --layout-file " + file + " --layout sliding=roll");
  EXPECT_EQ(both.status, 2) << both.out;
  EXPECT_TRUE(has(both.out, "--layout-file: the file gives what --layout would")) << both.out;
  Result per_type = layoutx("step --layout-file " + std::string(LAYOUTX_CONFIG_DIR) + "/layouts/spark-x2.5-1.7b-w4a16-ctx4096.yaml");
  EXPECT_EQ(per_type.status, 2) << per_type.out;
  EXPECT_TRUE(has(per_type.out, "no model_layout block")) << per_type.out;
  // Qwen2.5-7B at fp16 in one part: 13 GB of weights against a 2 GB file.
  Result big = layoutx(std::string("propose --model ") + LAYOUTX_TEST_DIR +
                       "/fixtures/hf/qwen2.5-7b.json --precision fp16 --ctx 4096 --no-fidelity --layers-per-part 28");
  EXPECT_EQ(big.status, 2) << big.out;
  EXPECT_TRUE(has(big.out, "part 'layers 0-27' holds")) << big.out;
  EXPECT_TRUE(has(big.out, "galaxy-s25 runtime.max_binary_gb")) << big.out;
}

// next --whole-model: an exporter's layout of another model, valued as a timing on the device;
// a file that is not a layout file is refused naming the flag and the file.
TEST(Cli, NextValuesAWholeModelTimingOfAnExportersLayout) {
  const std::string layout = std::string(LAYOUTX_CONFIG_DIR) + "/layouts/exporters/aihub-llama-3.2-1b.yaml";
  Result r = layoutx("next --no-fidelity --budget 1 --whole-model " + layout);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, "whole-model timings on the device")) << r.out;
  EXPECT_TRUE(has(r.out, "configs/layouts/exporters/aihub-llama-3.2-1b.yaml  4096")) << r.out;
  Result j = layoutx("next --no-fidelity --budget 1 --json --whole-model " + layout);
  EXPECT_EQ(j.status, 0) << j.out;
  EXPECT_TRUE(has(j.out, "\"whole_model_timings\": [")) << j.out;
  const std::string spec = std::string(LAYOUTX_CONFIG_DIR) + "/layouts/exporters/phi-3.5-mini.yaml";
  Result b = layoutx("next --no-fidelity --whole-model " + spec);
  EXPECT_EQ(b.status, 2) << b.out;
  EXPECT_TRUE(has(b.out, "--whole-model: ") && has(b.out, "phi-3.5-mini.yaml")) << b.out;
}

TEST(Cli, NextRanksMeasurementsAndWritesTheirBundlesWhole) {
  layoutx::test::TempDir tmp("next");
  const std::string dir = tmp / "plan";
  const std::string tiny = std::string("--model ") + LAYOUTX_TEST_DIR + "/fixtures/numerics/tiny-model.yaml --ctx 64 --no-fidelity";
  Result r = layoutx("next " + tiny + " --budget 2 --out " + dir);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, "value ms/step")) << r.out;
  for (const char* f : {"/plan.yaml", "/submit_all.sh"}) EXPECT_EQ(access((dir + f).c_str(), R_OK), 0) << f;
  int bundles = 0;  // one per planned measurement, each a job bundle
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_directory()) bundles += std::filesystem::exists(e.path() / "job.yaml");
  EXPECT_EQ(bundles, 2) << r.out;
  // Bad input: exit 2 with a message, nothing written.
  struct Case {
    std::string args, message;
  } cases[] = {
      {"--budget 0", "--budget: must be an integer in [1, 1000], got '0'"},
      {"--budget 999", "--budget: 999 is more than the"},
      {"--budget 1 --out " + dir, "folder exists and is not empty"},
      {"--budget 1 --out /proc/layoutx-nope/plan", "/proc/layoutx-nope/plan"},
  };
  for (const auto& c : cases) {
    Result b = layoutx("next " + tiny + " " + c.args);
    EXPECT_EQ(b.status, 2) << c.args << "\n" << b.out;
    EXPECT_TRUE(has(b.out, c.message)) << c.args << "\n" << b.out;
  }
}

// On Spark at fp16 the shipped measurements timed several candidates: next may propose an
// op-level profile of one (never a timing of it), and says which op class it pins; its bundle is
// a profile job with an ingest line.
TEST(Cli, NextProposesOpProfilesOnlyOfTimedBuilds) {
  layoutx::test::TempDir tmp("next-profile");
  const std::string dir = tmp / "plan";
  // The 20 most valuable (cost model 3 ranks timings of untimed full-layer forms first at fp16
  // 1k; the first profile is 11th).
  Result r = layoutx("next --precision fp16 --ctx 1024 --no-fidelity --budget 20 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, "\"kind\": \"op-profile\"")) << r.out;
  EXPECT_TRUE(has(r.out, "\"op_class\": ")) << r.out;
  EXPECT_TRUE(has(r.out, "pins the ")) << r.out;
  // The timed builds (roll, score-join and its tanh twin at fp16) are profiled, not timed again.
  EXPECT_FALSE(has(r.out, "\"kind\": \"timing\",\n    \"variant_key\": \"returns=window,precision=fp16\"")) << r.out;
  // The bundle of the most valuable one (one Spark layer: about 10 s and 230 MB of calibration
  // samples, so only one) and the plan's line that ingests what it returns.
  Result b = layoutx("next --precision fp16 --ctx 1024 --no-fidelity --budget 1 --out " + dir);
  ASSERT_EQ(b.status, 0) << b.out;
  std::ifstream plan(dir + "/plan.yaml");
  std::stringstream text;
  text << plan.rdbuf();
  EXPECT_TRUE(has(text.str(), "kind: ")) << text.str();
  EXPECT_TRUE(has(text.str(), "ingest: ")) << text.str();
  // A profile's line ingests its profile (the most valuable may be a compile-only job instead,
  // whose line says where its outcome goes).
  if (has(text.str(), "kind: op-profile")) EXPECT_TRUE(has(text.str(), "layoutx ingest profile_aihub.json")) << text.str();
  else EXPECT_TRUE(has(text.str(), "add the outcome")) << text.str();
}

// A number after `"key": ` in a JSON document (the first such key).
double json_number(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\": ");
  EXPECT_NE(at, std::string::npos) << key;
  return at == std::string::npos ? 0.0 : std::stod(json.substr(at + key.size() + 4));
}

TEST(Cli, PredictShowsTheDevicesTimingOfTheSameGraph) {
  // Sliding layers cache window-1 entries at any context: the timing at 4096 is this graph too.
  Result t = layoutx("predict --layer sliding --ctx 1024 --layout roll --precision w4a16");
  ASSERT_EQ(t.status, 0) << t.out;
  EXPECT_TRUE(has(t.out, "measured     0.917 ms on the device (sliding-roll-w4a16, "
                         "configs/calibration/spark-s25-measurements.yaml:"))
      << t.out;
  Result j = layoutx("predict --layer sliding --ctx 1024 --layout roll --precision w4a16 --json");
  ASSERT_EQ(j.status, 0) << j.out;
  EXPECT_TRUE(has(j.out, "\"id\": \"sliding-roll-w4a16\"")) << j.out;
  const double predicted = json_number(j.out, "latency_ms"), measured = json_number(j.out, "ms");
  EXPECT_EQ(measured, 0.917);
  EXPECT_NEAR(json_number(j.out, "prediction_error_pct"), 100 * (predicted - measured) / measured, 1e-6);
  // Another precision, layer or layout is another graph; the ring at w8a16 was never timed.
  Result w8 = layoutx("predict --layer sliding --layout roll --precision w8a16 --json");
  EXPECT_TRUE(has(w8.out, "\"id\": \"sliding-roll-w8a16\"")) << w8.out;
  EXPECT_FALSE(has(w8.out, "sliding-roll-w4a16")) << w8.out;
  Result ring = layoutx("predict --layer sliding --layout ring --precision w8a16 --json");
  ASSERT_EQ(ring.status, 0) << ring.out;
  EXPECT_TRUE(has(ring.out, "\"measured\": []")) << ring.out;
  Result text = layoutx("predict --layer sliding --layout ring --precision w8a16");
  EXPECT_FALSE(has(text.out, "measured")) << text.out;
}

// The text after `"key": ` up to the end of its value's line (or array), for comparing answers.
std::string json_value(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\": ");
  EXPECT_NE(at, std::string::npos) << key;
  return at == std::string::npos ? "" : json.substr(at, json.find_first_of("]\n", at) - at);
}

// `--calibration FILE` reads whatever document FILE holds: given the shipped hypotheses file it
// predicts with the same mixture as the default (it used to read it as one calibration and fail),
// and --hypotheses lists the same members' figures (costmodel/predictor_factory.h). A file is
// used as saved, the shipped mixture weighed by the public records by default: the same evidence
// on both sides gives the same figures.
TEST(Cli, PredictWithTheShippedHypothesesFileEqualsTheDefault) {
  const std::string file = std::string(LAYOUTX_CONFIG_DIR) + "/calibration/galaxy-s25.hypotheses.yaml";
  for (const char* q : {"", " --layer full --ctx 2048 --layout ring --precision w8a16",
                        " --evidence all --layer full --ctx 4096 --layout ring --precision w4a16"}) {
    const bool all = std::string(q).find("--evidence all") != std::string::npos;
    Result d = layoutx(std::string("predict --json --hypotheses") + (all ? "" : " --evidence team") + q);
    Result f = layoutx("predict --json --hypotheses --calibration " + file + q);
    ASSERT_EQ(d.status, 0) << d.out;
    ASSERT_EQ(f.status, 0) << f.out;
    for (const char* key : {"latency_ms", "interval_ms", "floor_ms", "compiles", "calibration_id"})
      EXPECT_EQ(json_value(f.out, key), json_value(d.out, key)) << key << q;
    EXPECT_EQ(f.out.substr(f.out.find("\"hypotheses\"")), d.out.substr(d.out.find("\"hypotheses\""))) << q;
    EXPECT_TRUE(has(f.out, "\"calibration_source\": \"file " + file + (all ? "; weighed again" : "\""))) << f.out;
  }
  Result d = layoutx("predict --evidence team");
  Result f = layoutx("predict --calibration " + file);
  ASSERT_EQ(f.status, 0) << f.out;
  const auto latency_line = [](const std::string& out) { return out.substr(out.find("latency "), out.find('\n', out.find("latency ")) - out.find("latency ")); };
  EXPECT_EQ(latency_line(f.out), latency_line(d.out)) << f.out;
}

// The VTCM live set beside the ops: a quantized full layer at 1k holds the converted K (1 MiB),
// the concatenated K (1 MiB) and the converted V waiting (1 MiB) at the concat: over the 2 and
// 2.5 MiB knees; at fp16 no converted copies, 2 MiB, not over (htp-facts.md).
TEST(Cli, GraphShowsTheLiveSetAndTheKnees) {
  Result q = layoutx("graph --layer full --ctx 1024 --layout ring --precision w8a16");
  ASSERT_EQ(q.status, 0) << q.out;
  EXPECT_TRUE(has(q.out, "live KiB")) << q.out;
  EXPECT_TRUE(has(q.out, "peak 3.00 MiB at attn/k_concat; knees in galaxy-s25's hypotheses: 2 MiB over, 2.5 MiB over, 4 MiB not over"))
      << q.out;
  Result f = layoutx("graph --layer full --ctx 1024 --layout ring --precision fp16 --json");
  ASSERT_EQ(f.status, 0) << f.out;
  EXPECT_TRUE(has(f.out, "\"peak_live_bytes\": 2097152")) << f.out;
  EXPECT_TRUE(has(f.out, "\"knees_mib\": [2,2.5,4]")) << f.out;
  Result cpu = layoutx("graph --layer full --ctx 1024 --layout ring --device onnxruntime-cpu");
  EXPECT_TRUE(has(cpu.out, "onnxruntime-cpu models no VTCM")) << cpu.out;
  Result bad = layoutx("graph --device nope");
  EXPECT_EQ(bad.status, 2);
  EXPECT_TRUE(has(bad.out, "--device: unknown device 'nope'")) << bad.out;
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
      {"predict --device nope", "--device: unknown device 'nope' (known: galaxy-s25, onnxruntime-cpu"},
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

namespace {

// Families (issue #15): graph --params prints the whole model's count; select on a Gemma 3
// model writes its own tanh GELU, a SiLU model has no gelu axis; an unmodelled key exits 2.
TEST(CliFamilies, GraphParamsPrintsTheCountAndStructure) {
  Result r = layoutx(std::string("graph --params --json --model ") + LAYOUTX_TEST_DIR + "/fixtures/hf/gemma3-1b.json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, "\"total\": 999885952")) << r.out;
  EXPECT_TRUE(has(r.out, "\"norms_per_layer\": 6")) << r.out;
  Result t = layoutx(std::string("graph --params --model ") + LAYOUTX_TEST_DIR + "/fixtures/hf/llama3.2-1b.json");
  ASSERT_EQ(t.status, 0) << t.out;
  EXPECT_TRUE(has(t.out, "total      1,235,814,400")) << t.out;
  EXPECT_TRUE(has(t.out, "activation silu")) << t.out;
}

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(CliFamilies, SelectWritesTheModelsOwnGelu) {
  layoutx::test::TempDir d("families-select");
  for (std::string model : {std::string(LAYOUTX_CONFIG_DIR) + "/models/gemma-3-1b.yaml",
                            std::string(LAYOUTX_TEST_DIR) + "/fixtures/hf/gemma3-1b.json"}) {
    const auto out = d.path() / "gemma.yaml";
    Result r = layoutx("select --precision w4a16 --ctx 4096 --no-fidelity --model " + model + " --out " + out.string());
    ASSERT_EQ(r.status, 0) << r.out;
    const std::string file = read_all(out);
    EXPECT_TRUE(has(file, "gelu: tanh")) << model << "\n" << file;
    EXPECT_FALSE(has(file, "gelu: erf")) << model << "\n" << file;
  }
  // A SiLU model: no gelu axis in the layout file, the table or the JSON.
  const std::string mistral = std::string(LAYOUTX_TEST_DIR) + "/fixtures/hf/mistral-7b.json";
  const auto out = d.path() / "mistral.yaml";
  Result s = layoutx("select --precision w4a16 --ctx 8192 --no-fidelity --model " + mistral + " --out " + out.string());
  ASSERT_EQ(s.status, 0) << s.out;
  EXPECT_FALSE(has(s.out, "gelu")) << s.out;
  EXPECT_FALSE(has(read_all(out), "gelu")) << read_all(out);
  Result j = layoutx("select --precision w4a16 --ctx 8192 --no-fidelity --json --model " + mistral);
  ASSERT_EQ(j.status, 0) << j.out;
  EXPECT_FALSE(has(j.out, "gelu")) << j.out;
}

TEST(CliFamilies, AnUnmodelledConfigKeyExitsTwoNamingFileAndKey) {
  layoutx::test::TempDir d("families");
  const auto cfg = d.path() / "config.json";
  std::ofstream(cfg) << R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
    "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100, "mlp_bias": true})";
  Result r = layoutx("graph --params --model " + cfg.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.out, cfg.string() + ":")) << r.out;
  EXPECT_TRUE(has(r.out, "mlp_bias: true is not modelled")) << r.out;
}

}  // namespace
