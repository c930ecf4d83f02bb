// Each parser on its fixture (numbers checked against the fixture's own figures) and on the
// bad-input fixtures (message names file:line and what is wrong).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "db/csv.h"
#include "db/profile.h"
#include "support/error.h"
#include "tests/error_message.h"
#include "tests/db/db_test_util.h"

namespace layoutx::db {
namespace {

using ::testing::HasSubstr;

std::string read(const std::string& name) {
  std::ifstream in(test::fixture(name), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string error_of(Format f, const std::string& name) {
  return testing::error_message([&] { parse_profile(f, read(name), name); });
}

TEST(Csv, SplitsQuotedFieldsAndSpaces) {
  auto f = split_csv_line(R"(1000, EXECUTE, "a, b", "say ""hi""" ,x)", "f", 1);
  EXPECT_EQ(f, (std::vector<std::string>{"1000", "EXECUTE", "a, b", "say \"hi\"", "x"}));
  EXPECT_THROW(split_csv_line(R"(1, "open)", "f", 1), Error);
}

TEST(Median, OddAndEven) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), (2.0 + 3.0) / 2);
}

TEST(QnnCsv, ReadsExecuteGroupsAndConvertsCycles) {
  auto p = parse_qnn_csv(read("qnn_roll_sliding_fp16.csv"), "q.csv");
  EXPECT_EQ(p.tool, "qnn-profile-viewer");
  EXPECT_THAT(p.tool_version, HasSubstr("2.28.0.241029"));
  EXPECT_EQ(p.boundary, "accelerator");
  ASSERT_EQ(p.layers.size(), 1u);
  // Accelerator (execute) time of the three inferences: 1700, 1600, 1620 US; the median.
  EXPECT_DOUBLE_EQ(p.layers[0].ms, 1620 / 1000.0);
  EXPECT_EQ(p.layers[0].samples, 3);
  // 7 per-op rows per inference (Input, 5 nodes, Output); 0 cycles are kept.
  ASSERT_EQ(p.ops.size(), 21u);
  EXPECT_EQ(p.ops[2].name, "attn/qkv_proj");
  EXPECT_EQ(p.ops[2].inference, 0);
  EXPECT_EQ(*p.ops[2].cycles, 540000);
  EXPECT_DOUBLE_EQ(*p.ops[2].ms, 540000 * (1700.0 / 1700000.0) / 1000.0);
  // The second inference converts with its own accelerator time over its own cycles.
  EXPECT_EQ(p.ops[9].name, "attn/qkv_proj");
  EXPECT_EQ(p.ops[9].inference, 1);
  EXPECT_DOUBLE_EQ(*p.ops[9].ms, 530000 * (1600.0 / 1640000.0) / 1000.0);
  EXPECT_EQ(p.ops[0].name, "Input OpId_2");
  EXPECT_EQ(*p.ops[4].cycles, 0);
  EXPECT_DOUBLE_EQ(*p.ops[4].ms, 0.0);
}

TEST(QnnCsv, BadInputsNameTheLine) {
  EXPECT_THAT(error_of(Format::kQnnCsv, "qnn_missing_column.csv"),
              HasSubstr("qnn_missing_column.csv:33: row has 6 fields, the header 7 (a missing column?)"));
  EXPECT_THAT(error_of(Format::kQnnCsv, "qnn_negative_time.csv"), HasSubstr("qnn_negative_time.csv:25: negative Time -1600"));
  EXPECT_THAT(error_of(Format::kQnnCsv, "qnn_unknown_unit.csv"), HasSubstr("qnn_unknown_unit.csv:40: unknown unit \"MS\""));
  EXPECT_THAT(error_of(Format::kQnnCsv, "ours_roll.csv"), HasSubstr("no header line starting \"Msg Timestamp\""));
}

TEST(AihubJson, ReadsSummaryAndDetail) {
  auto p = parse_aihub_json(read("aihub_roll_sliding_w8a16.json"), "a.json");
  EXPECT_EQ(p.boundary, "aihub_estimate");
  ASSERT_EQ(p.layers.size(), 1u);
  EXPECT_DOUBLE_EQ(p.layers[0].ms, 934 / 1000.0);  // the headline estimate, not the samples' mean
  EXPECT_EQ(p.layers[0].samples, 7);
  ASSERT_EQ(p.ops.size(), 8u);
  EXPECT_EQ(p.ops[2].name, "attn/qkv_proj");
  EXPECT_EQ(p.ops[2].type, "FULLY_CONNECTED");
  EXPECT_EQ(p.ops[2].compute_unit, "NPU");
  EXPECT_DOUBLE_EQ(*p.ops[2].ms, 168 / 1000.0);
  EXPECT_EQ(*p.ops[2].cycles, 302400);
  EXPECT_FALSE(p.ops[3].cycles.has_value());
  EXPECT_THAT(p.notes, HasSubstr("inference_memory_peak_range [16777216, 18874368] B"));
}

TEST(AihubJson, BadInputsNameTheLine) {
  EXPECT_THAT(error_of(Format::kAihubJson, "aihub_truncated.json"), HasSubstr("aihub_truncated.json:"));
  EXPECT_THAT(error_of(Format::kAihubJson, "aihub_truncated.json"), HasSubstr("cannot parse"));
  EXPECT_THAT(error_of(Format::kAihubJson, "aihub_negative_time.json"),
              HasSubstr("aihub_negative_time.json:27:"));
  EXPECT_THAT(error_of(Format::kAihubJson, "aihub_negative_time.json"), HasSubstr("execution_detail[3].execution_time"));
}

TEST(OrtJson, SumsKernelTimesPerRun) {
  auto p = parse_ort_json(read("ort_roll_sliding_fp16.json"), "o.json");
  EXPECT_EQ(p.boundary, "ort_node");
  ASSERT_EQ(p.ops.size(), 10u);  // 5 nodes x 2 runs; fence events dropped
  EXPECT_EQ(p.ops[0].name, "block/input_norm");
  EXPECT_EQ(p.ops[0].type, "SimplifiedLayerNormalization");
  EXPECT_EQ(p.ops[0].compute_unit, "CPUExecutionProvider");
  EXPECT_EQ(p.ops[5].inference, 1);
  ASSERT_EQ(p.layers.size(), 1u);
  double run1 = 41 + 1320 + 212 + 35 + 3102, run2 = 39 + 1290 + 208 + 33 + 3050;
  EXPECT_DOUBLE_EQ(p.layers[0].ms, (run1 + run2) / 2 / 1000.0);
  EXPECT_EQ(p.layers[0].samples, 2);
  EXPECT_THROW(parse_ort_json("{\"a\": 1}", "o.json"), Error);
}

TEST(MeasurementYaml, ReadsLayersSharesAndCompiles) {
  auto p = parse_measurement_yaml(read("measurements.yaml"), "m.yaml");
  ASSERT_EQ(p.layers.size(), 3u);
  EXPECT_EQ(p.layers[0].variant_key, "precision=fp16");
  EXPECT_EQ(*p.layers[0].ctx, 511 + 1);  // a sliding record states its cache, not its context
  EXPECT_EQ(*p.layers[1].cache_entries, 2048 - 1);
  EXPECT_EQ(p.layers[1].variant_key, "returns=new_entry,precision=w8a16");
  EXPECT_EQ(p.layers[2].variant_key,
            "returns=new_entry,join=scores,gelu=tanh,precision=fp16");
  EXPECT_DOUBLE_EQ(p.layers[2].ms, 1.4);
  ASSERT_EQ(p.shares.size(), 3u);
  EXPECT_EQ(p.shares[0].selector, "returns=window,join=keys");
  EXPECT_FALSE(p.shares[1].ctx.has_value());  // "unstated"
  EXPECT_DOUBLE_EQ(p.shares[2].share_max, 0.12);
  ASSERT_EQ(p.compiles.size(), 2u);
  EXPECT_EQ(p.compiles[0].result, "fail");
  EXPECT_EQ(*p.compiles[0].exit_code, 14);
  EXPECT_THAT(p.device_description, HasSubstr("Test Phone"));
}

// shared/data writes a compile record's form as unquoted prose in a flow mapping; a comma in it
// makes YAML read the rest as a key without a value. The reader joins it back and warns; a key
// with a value is still an unknown key, and `contested` is a result of its own.
TEST(MeasurementYaml, JoinsProseSplitAtAnUnquotedCommaAndReadsContested) {
  const std::string text =
      "model: spark-x2.5-1.7b\n"
      "compile:\n"
      "  - {precision: w4a16, form: ring (roll's attention, returns the new entry only), result: ok}\n"
      "  - {precision: w4a16, form: score-join with fused Softmax, result: contested}\n";
  Profile p = parse_measurement_yaml(text, "c.yaml");
  ASSERT_EQ(p.compiles.size(), 2u);
  EXPECT_EQ(p.compiles[0].form, "ring (roll's attention, returns the new entry only)");
  EXPECT_EQ(p.compiles[0].result, "ok");
  EXPECT_EQ(p.compiles[1].result, "contested");
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_THAT(p.warnings[0], HasSubstr("c.yaml:3:"));
  EXPECT_THAT(p.warnings[0], HasSubstr("unquoted comma"));

  const std::string misspelt = "model: m\ncompile:\n  - {precision: w4a16, form: a, result: ok, exit_cod: 14}\n";
  EXPECT_THAT(testing::error_message([&] { parse_measurement_yaml(misspelt, "m.yaml"); }),
              HasSubstr("compile[0].exit_cod: unknown key"));
  const std::string unsure = "model: m\ncompile:\n  - {precision: w4a16, result: maybe}\n";
  EXPECT_THAT(testing::error_message([&] { parse_measurement_yaml(unsure, "u.yaml"); }),
              HasSubstr("must be ok, fail or contested"));
}

// A key that is not a plain name (an empty key after a comma, a collection) is an error naming the
// record, not a crash (found by scripts/fuzz: the prose joiner looked such a key up by its text and
// yaml-cpp threw InvalidNode).
TEST(MeasurementYaml, AKeyThatIsNotAPlainNameIsAnError) {
  const std::string empty_key = "model: m\ncompile:\n  - {precision: w4a16, form: explicit softmax, : keys, result: fail}\n";
  EXPECT_THAT(testing::error_message([&] { parse_measurement_yaml(empty_key, "e.yaml"); }),
              HasSubstr("e.yaml:3:48: compile[0]: a key must be a plain name, got an empty key"));
  const std::string collection_key = "model: m\ncompile:\n  - {precision: w4a16, form: a, [x, y]: 1, result: ok}\n";
  EXPECT_THAT(testing::error_message([&] { parse_measurement_yaml(collection_key, "c.yaml"); }),
              HasSubstr("compile[0]: a key must be a plain name, got a collection"));
}

TEST(MeasurementYaml, CollectsEveryProblem) {
  std::string e = error_of(Format::kYaml, "measurements_bad.yaml");
  EXPECT_THAT(e, HasSubstr("measurements_bad.yaml:8:7: unit: unknown unit \"fortnights\""));
  EXPECT_THAT(e, HasSubstr("measurements_bad.yaml:11:"));
  EXPECT_THAT(e, HasSubstr("colour"));
}

TEST(MeasurementCsv, ReadsRowsAndRejectsBadOnes) {
  auto p = parse_measurement_csv(read("ours_roll.csv"), "o.csv");
  ASSERT_EQ(p.layers.size(), 3u);
  EXPECT_EQ(p.layers[1].variant_key, "returns=new_entry,precision=fp16");
  EXPECT_EQ(p.layers[2].layer_type, "sliding");
  EXPECT_EQ(p.layers[2].variant_key, "returns=new_entry,join=scores,precision=fp16");
  EXPECT_EQ(p.layers[0].samples, 20);
  EXPECT_THAT(error_of(Format::kCsv, "ours_negative.csv"), HasSubstr("ours_negative.csv:3: negative time -2.98"));
  EXPECT_THAT(error_of(Format::kCsv, "ours_missing_column.csv"),
              HasSubstr("ours_missing_column.csv:3: row has 4 fields, the header 5"));
}

}  // namespace
}  // namespace layoutx::db

namespace layoutx::db {
namespace {

// Found by fuzz_measurement_csv: a header naming a column twice ("ms,ms") read past the row.
TEST(MeasurementCsv, RepeatedColumnIsRejected) {
  EXPECT_THAT(error_of(Format::kCsv, "ours_repeated_column.csv"),
              HasSubstr("ours_repeated_column.csv:2: column \"ms\" appears twice"));
  // A context beyond int range was narrowed silently before.
  EXPECT_THROW(parse_measurement_csv("layer,ctx,variant,precision,ms\nfull,99999999999,ring,fp16,1\n", "big.csv"), Error);
}

}  // namespace
}  // namespace layoutx::db
