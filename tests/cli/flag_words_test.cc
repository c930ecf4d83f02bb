// Issue #32 items 11 and 6: errors name the flag that gave the value (not the YAML key it is
// also read from), emit --select obeys --layer and refuses flags the layout file gives, a
// multi-document YAML is refused, and predict's "measured" line is the graph's own timing.
#include <gtest/gtest.h>

#include <algorithm>
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

void expect_exit2(const std::string& args, const std::string& message) {
  Result r = layoutx(args);
  EXPECT_EQ(r.status, 2) << args << "\n" << r.out;
  EXPECT_TRUE(has(r.out, message)) << args << "\n" << r.out;
}

TEST(FlagWords, ContextAndPrecisionErrorsNameTheFlag) {
  expect_exit2("whatif --no-fidelity --base-ctx 100", "--base-ctx: 100 is below the sliding window");
  expect_exit2("whatif --no-fidelity --ctx 100", "--ctx: 100 is below the sliding window");
  expect_exit2("step --sweep-ctx 2:1024", "--sweep-ctx: 2 is below the sliding window");
  expect_exit2("select --no-fidelity --ctx 100", "--ctx: 100 is below the sliding window");
  for (const char* verb : {"select --no-fidelity", "step", "next --no-fidelity", "predict", "graph", "parity"})
    expect_exit2(std::string(verb) + " --precision fp8", "--precision: must be one of fp16, w8a16, w4a16, got 'fp8'");
  expect_exit2("whatif --no-fidelity --base-precision fp8", "--base-precision: must be one of fp16, w8a16, w4a16");
  expect_exit2("step --head-precision int4", "--head-precision: must be one of fp16, w8a16, w4a16");
}

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(FlagWords, EmitSelectObeysLayerAndRefusesWhatTheLayoutGives) {
  layoutx::test::TempDir d("emit-select-layer");
  const std::string layout = std::string(LAYOUTX_CONFIG_DIR) + "/layouts/spark-x2.5-1.7b-w4a16-ctx1024.yaml";
  const auto out = d.path() / "full-only";
  Result r = layoutx("emit --select " + layout + " --layer full --calibration-samples 1 --json --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.out, "\"layer\": \"full\"")) << r.out;
  EXPECT_FALSE(has(r.out, "\"layer\": \"sliding\"")) << r.out;
  EXPECT_FALSE(std::filesystem::exists(out / "sliding")) << out;
  for (const char* flag : {"--ctx 2048", "--layout score-join", "--precision fp16", "--set softmax=explicit"})
    expect_exit2("emit --select " + layout + " " + flag + " --out " + (d.path() / "x").string(),
                 std::string(flag).substr(0, std::string(flag).find(' ')) + ": --select " + layout);
}

TEST(FlagWords, AMultiDocumentYamlIsRefused) {
  layoutx::test::TempDir d("multi-doc");
  const auto spec = d.path() / "spark.yaml";
  std::ofstream(spec) << read_all(std::string(LAYOUTX_CONFIG_DIR) + "/models/spark-x2.5-1.7b.yaml")
                      << "---\nname: another\n";
  expect_exit2("graph --model " + spec.string(), spec.string() + ":");
  expect_exit2("graph --model " + spec.string(), "a second YAML document");
  // A trailing "---" with nothing after it is one document.
  const auto trailing = d.path() / "trailing.yaml";
  std::ofstream(trailing) << read_all(std::string(LAYOUTX_CONFIG_DIR) + "/models/spark-x2.5-1.7b.yaml") << "---\n";
  Result ok = layoutx("graph --model " + trailing.string());
  EXPECT_EQ(ok.status, 0) << ok.out;
}

// Item 6: Spark's timing of the full ring layer at 4k, w8a16 is the graph's; a spec that keeps
// Spark's name with another hidden_size builds another graph, which was never timed.
TEST(FlagWords, PredictsMeasuredLineIsTheGraphsOwn) {
  const std::string args = " --layer full --layout ring --ctx 4096 --precision w8a16";
  Result spark = layoutx("predict" + args);
  ASSERT_EQ(spark.status, 0) << spark.out;
  EXPECT_TRUE(has(spark.out, "measured     1.681 ms on the device (full4k-w8a16")) << spark.out;
  layoutx::test::TempDir d("renamed-shape");
  const auto spec = d.path() / "spark-x2.5-1.7b.yaml";
  std::string text = read_all(std::string(LAYOUTX_CONFIG_DIR) + "/models/spark-x2.5-1.7b.yaml");
  const auto at = text.find("hidden_size: 2048");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 17, "hidden_size: 1024");
  std::ofstream(spec) << text;
  Result other = layoutx("predict --model " + spec.string() + args);
  ASSERT_EQ(other.status, 0) << other.out;
  EXPECT_FALSE(has(other.out, "measured ")) << other.out;
  Result json = layoutx("predict --json --model " + spec.string() + args);
  ASSERT_EQ(json.status, 0) << json.out;
  EXPECT_TRUE(has(json.out, "\"measured\": []")) << json.out;
}

}  // namespace

namespace {

// Item 10: one rule for input ranges. The measurement reader (ingest of our YAML, calibrate
// --data) and ingest's checks take the contexts and latencies every verb takes.
TEST(InputRanges, IngestAndCalibrateDataShareOneRule) {
  layoutx::test::TempDir d("input-ranges");
  auto file = [&](const std::string& name, const std::string& records) {
    const auto p = d.path() / name;
    std::ofstream(p) << "device: galaxy-s25\nmodel: spark-x2.5-1.7b\nunit: ms_per_layer\nlayer_latency:\n" << records;
    return p.string();
  };
  const std::string db = (d.path() / "h.db").string();
  // A sliding record at context 100: below Spark's 512-token window, as every verb says.
  const std::string short_ctx = file("short.yaml", "  - {id: a, layer: sliding, context: 100, returns: window, join: keys, precision: fp16, ms: 1.5}\n");
  expect_exit2("ingest " + short_ctx + " --db " + db, short_ctx + ":5: context: 100 is below the sliding window");
  // A record id given twice.
  const std::string dup = file("dup.yaml", "  - {id: a, layer: full, context: 2048, returns: new_entry, join: keys, precision: fp16, ms: 1.5}\n"
                                           "  - {id: a, layer: full, context: 4096, returns: new_entry, join: keys, precision: fp16, ms: 1.6}\n");
  expect_exit2("ingest " + dup + " --db " + db, "id: 'a' is given twice");
  // A latency no layer takes: refused by the reader, naming the file and key, in both verbs.
  const std::string huge = file("huge.yaml", "  - {id: a, layer: full, context: 2048, returns: new_entry, join: keys, precision: fp16, ms: 1e308}\n");
  expect_exit2("calibrate --data " + huge, huge + ":5");
  expect_exit2("calibrate --data " + huge, "one layer's decode step must be at most 10000 ms");
  expect_exit2("ingest " + huge + " --db " + db, "one layer's decode step must be at most 10000 ms");
  // ingest --ctx: the range of every other verb.
  expect_exit2("ingest " + short_ctx + " --db " + db + " --ctx 1", "--ctx: must be an integer in [2, 1048576]");
}

// calibrate --data fits only the device's own timings: a file whose `device:` names another phone
// is refused at that key (it used to be fitted as galaxy-s25's without a word).
TEST(InputRanges, CalibrateRefusesAnotherPhonesTimings) {
  layoutx::test::TempDir d("other-phone");
  std::string text = read_all(std::filesystem::path(LAYOUTX_CONFIG_DIR) / "calibration" / "spark-s25-measurements.yaml");
  const size_t at = text.find("\ndevice: galaxy-s25\n");
  ASSERT_NE(at, std::string::npos);
  const size_t line = static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n')) + 2;
  text.replace(at, 20, "\ndevice: pixel-9-pro\n");
  const auto p = (d.path() / "pixel.yaml").string();
  std::ofstream(p) << text;
  expect_exit2("calibrate --data " + p, p + ":" + std::to_string(line) + ":9: device: the timings are of 'pixel-9-pro'");
  Result ok = layoutx("calibrate --json --data " + std::string(LAYOUTX_CONFIG_DIR) + "/calibration/spark-s25-measurements.yaml");
  EXPECT_EQ(ok.status, 0) << ok.out.substr(0, 400);
}

}  // namespace
