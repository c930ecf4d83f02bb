// Ingest into a database: one transaction per file, idempotent by hash, a malformed file leaves
// the database exactly as it was, two processes at once both succeed.
#include "db/ingest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "db/schema.h"
#include "db/synthetic_profile.h"
#include "support/error.h"
#include "tests/db/db_test_util.h"

namespace layoutx::db {
namespace {

using ::testing::HasSubstr;

IngestContext graph_context(const std::string& variant, const std::string& layer, int ctx) {
  IngestContext c;
  c.device = "galaxy-s25";
  c.variant = variant;
  c.layer = layer;
  c.ctx = ctx;
  return c;
}

TEST(Ingest, DetectsFormats) {
  EXPECT_EQ(detect_format("a.yaml", ""), Format::kYaml);
  EXPECT_EQ(detect_format("a.csv", "x\nMsg Timestamp,Message"), Format::kQnnCsv);
  EXPECT_EQ(detect_format("a.csv", "layer,ctx"), Format::kCsv);
  EXPECT_EQ(detect_format("a.json", " [ {} ]"), Format::kOrtJson);
  EXPECT_EQ(detect_format("a.json", "{\"execution_summary\": {}}"), Format::kAihubJson);
  EXPECT_THROW(detect_format("a.json", "{}"), Error);
  EXPECT_THROW(detect_format("a.txt", ""), Error);
}

TEST(Ingest, StoresEachFormatAndTheBoundary) {
  auto c = open_database(test::temp_path("x.db"));
  IngestContext ours;
  ours.device = "galaxy-s25";
  auto y = ingest_file(*c, test::fixture("measurements.yaml"), ours);
  EXPECT_EQ(y.layers, 3u);
  EXPECT_EQ(y.shares, 3u);
  EXPECT_EQ(y.compiles, 2u);
  auto q = ingest_file(*c, test::fixture("qnn_roll_sliding_fp16.csv"), graph_context("roll", "sliding", 4096));
  EXPECT_EQ(q.ops, 21u);
  auto a = ingest_file(*c, test::fixture("aihub_roll_sliding_w8a16.json"),
                       graph_context("precision=w8a16", "sliding", 4096));
  EXPECT_EQ(a.ops, 8u);
  auto o = ingest_file(*c, test::fixture("ort_roll_sliding_fp16.json"), graph_context("roll", "sliding", 4096));
  EXPECT_EQ(o.ops, 10u);
  auto s = c->prepare("SELECT format, boundary, length(content_hash) FROM measurement_runs ORDER BY id");
  std::vector<std::string> got;
  while (s.step()) got.push_back(s.text(0) + ":" + s.text(1) + ":" + s.text(2));
  EXPECT_EQ(got, (std::vector<std::string>{"yaml:ours:64", "qnn-csv:accelerator:64", "aihub-json:aihub_estimate:64",
                                           "ort-json:ort_node:64"}));
  // The AI Hub figure lands on the command line's variant, layer and context.
  auto l = c->prepare("SELECT v.key, l.layer_type, l.ctx, l.precision, l.ms, l.samples FROM layer_measurements l "
                      "JOIN variants v ON v.id = l.variant_id WHERE l.run_id = ?1");
  l.bind(1, a.run_id);
  ASSERT_TRUE(l.step());
  EXPECT_EQ(l.text(0), "precision=w8a16");
  EXPECT_EQ(l.text(1), "sliding");
  EXPECT_EQ(l.int64(2), 4096);
  EXPECT_EQ(l.text(3), "w8a16");
  EXPECT_DOUBLE_EQ(l.real(4), 0.934);
  EXPECT_EQ(l.int64(5), 7);
}

TEST(Ingest, PrecisionFlagOverridesThePreset) {
  auto c = open_database(test::temp_path("x.db"));
  auto ctx = graph_context("roll", "sliding", 4096);
  ctx.precision = "w8a16";
  auto a = ingest_file(*c, test::fixture("aihub_roll_sliding_w8a16.json"), ctx);
  auto l = c->prepare("SELECT v.key FROM layer_measurements l JOIN variants v ON v.id = l.variant_id");
  ASSERT_TRUE(l.step());
  EXPECT_EQ(l.text(0), "precision=w8a16");
}

TEST(Ingest, SameFileTwiceIsSkipped) {
  auto c = open_database(test::temp_path("x.db"));
  auto ctx = graph_context("roll", "sliding", 4096);
  auto first = ingest_file(*c, test::fixture("qnn_roll_sliding_fp16.csv"), ctx);
  std::string before = test::dump(*c);
  auto second = ingest_file(*c, test::fixture("qnn_roll_sliding_fp16.csv"), ctx);
  EXPECT_FALSE(first.skipped);
  EXPECT_TRUE(second.skipped);
  EXPECT_EQ(second.run_id, first.run_id);
  EXPECT_EQ(test::dump(*c), before);
}

// The same profile again under another --layer/--ctx/--variant: the stored record keeps what it
// was stored with, so the call cannot do what it asks: refused (naming the stored record, the
// one asked for and --replace), the database unchanged. With replace the old run goes and the
// file is stored under the new context, in one transaction. (Before: skipped as "already
// ingested", the new flags silently dropped.)
TEST(Ingest, ReingestUnderOtherFlagsIsRefusedUnlessReplaced) {
  auto c = open_database(test::temp_path("x.db"));
  auto first = ingest_file(*c, test::fixture("qnn_roll_sliding_fp16.csv"), graph_context("roll", "sliding", 4096));
  const std::string before = test::dump(*c);
  for (const auto& other : {graph_context("roll", "full", 4096), graph_context("roll", "sliding", 8192),
                            graph_context("ring", "sliding", 4096)}) {
    try {
      ingest_file(*c, test::fixture("qnn_roll_sliding_fp16.csv"), other);
      ADD_FAILURE() << "re-ingest under other flags was not refused";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("already ingested as run " + std::to_string(first.run_id)));
      EXPECT_THAT(e.what(), HasSubstr("the stored record keeps device galaxy-s25, model spark-x2.5-1.7b, layer sliding, ctx 4096"));
      EXPECT_THAT(e.what(), HasSubstr("give --replace"));
    }
    EXPECT_EQ(test::dump(*c), before);
  }
  auto full = graph_context("roll", "full", 8192);
  full.replace = true;
  auto again = ingest_file(*c, test::fixture("qnn_roll_sliding_fp16.csv"), full);
  EXPECT_FALSE(again.skipped);
  EXPECT_EQ(again.replaced_run, first.run_id);
  EXPECT_EQ(again.ops, first.ops);
  auto l = c->prepare("SELECT l.layer_type, l.ctx, count(*) FROM layer_measurements l GROUP BY l.layer_type, l.ctx");
  ASSERT_TRUE(l.step());
  EXPECT_EQ(l.text(0), "full");
  EXPECT_EQ(l.int64(1), 8192);
  EXPECT_EQ(l.int64(2), 1);
  EXPECT_FALSE(l.step());
  auto ops = c->prepare("SELECT count(*), count(DISTINCT run_id) FROM op_measurements");
  ASSERT_TRUE(ops.step());
  EXPECT_EQ(ops.int64(0), static_cast<int64_t>(first.ops));
  EXPECT_EQ(ops.int64(1), 1);
  // The same flags once more: skipped as before.
  EXPECT_TRUE(ingest_file(*c, test::fixture("qnn_roll_sliding_fp16.csv"), graph_context("roll", "full", 8192)).skipped);
}

TEST(Ingest, MalformedFilesLeaveTheDatabaseUnchanged) {
  auto c = open_database(test::temp_path("x.db"));
  auto ctx = graph_context("roll", "sliding", 4096);
  ingest_file(*c, test::fixture("qnn_roll_sliding_fp16.csv"), ctx);
  const std::string before = test::dump(*c);
  struct Case {
    const char* file;
    const char* message;
  } cases[] = {
      {"aihub_truncated.json", "aihub_truncated.json:"},
      {"aihub_negative_time.json", "aihub_negative_time.json:27:"},
      {"qnn_missing_column.csv", "qnn_missing_column.csv:33: row has 6 fields"},
      {"qnn_negative_time.csv", "qnn_negative_time.csv:25: negative Time"},
      {"qnn_unknown_unit.csv", "qnn_unknown_unit.csv:40: unknown unit \"MS\""},
      {"ours_negative.csv", "ours_negative.csv:3: negative time"},
      {"ours_missing_column.csv", "ours_missing_column.csv:3: row has 4 fields"},
      {"measurements_bad.yaml", "unknown unit \"fortnights\""},
  };
  for (const auto& k : cases) {
    try {
      ingest_file(*c, test::fixture(k.file), ctx);
      ADD_FAILURE() << k.file << " was accepted";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(k.message)) << k.file;
    }
    EXPECT_EQ(test::dump(*c), before) << k.file;
  }
}

// A failure after writing began (the second row names a variant the code rejects at store time)
// rolls the whole file back.
TEST(Ingest, FailureMidTransactionRollsBack) {
  auto c = open_database(test::temp_path("x.db"));
  const std::string before = test::dump(*c);
  Profile p;
  p.format = Format::kCsv;
  p.tool = "t";
  p.boundary = "ours";
  p.layers.push_back({"m", "precision=fp16", "sliding", 4096, {}, 1.0, 1, 2});
  p.layers.push_back({"m", "returns=sideways", "sliding", 4096, {}, 1.0, 1, 3});
  IngestContext ctx;
  ctx.device = "galaxy-s25";
  EXPECT_THROW(store_profile(*c, p, "mid.csv", "hash-mid", ctx), Error);
  EXPECT_EQ(test::dump(*c), before);
}

TEST(Ingest, OneGraphFormatsNeedTheirContext) {
  auto c = open_database(test::temp_path("x.db"));
  IngestContext ctx;
  ctx.device = "galaxy-s25";
  try {
    ingest_file(*c, test::fixture("qnn_roll_sliding_fp16.csv"), ctx);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("give --variant"));
  }
  ctx.variant = "roll";
  EXPECT_THROW(ingest_file(*c, test::fixture("qnn_roll_sliding_fp16.csv"), ctx), Error);  // no --layer
  EXPECT_EQ(test::rows(*c, "measurement_runs"), 0);
}

// Two processes ingest different files into one database at the same time; both succeed.
TEST(Ingest, TwoProcessesAtOnce) {
  const std::string db = test::temp_path("shared.db");
  open_database(db);  // created before the fork: children only open it
  const int kFilesPerChild = 3;
  std::vector<std::string> files;
  for (int i = 0; i < 2 * kFilesPerChild; ++i) {
    files.push_back(test::temp_path("p" + std::to_string(i) + ".csv"));
    std::ofstream(files.back()) << synthetic_qnn_csv(20, 250, static_cast<uint32_t>(i + 1));  // 5,000 op rows each
  }
  pid_t kids[2];
  for (int k = 0; k < 2; ++k) {
    kids[k] = fork();
    ASSERT_GE(kids[k], 0);
    if (kids[k] == 0) {
      int status = 0;
      try {
        auto c = open_database(db);
        for (int i = 0; i < kFilesPerChild; ++i)
          ingest_file(*c, files[static_cast<size_t>(k * kFilesPerChild + i)], graph_context("roll", "sliding", 4096));
      } catch (const std::exception& e) {
        fprintf(stderr, "child %d: %s\n", k, e.what());
        status = 1;
      }
      _exit(status);
    }
  }
  for (pid_t kid : kids) {
    int st = 0;
    waitpid(kid, &st, 0);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  auto c = open_database(db);
  EXPECT_EQ(test::rows(*c, "measurement_runs"), 2 * kFilesPerChild);
  EXPECT_EQ(test::rows(*c, "op_measurements"), 2 * kFilesPerChild * 20 * 250);
}

// The shipped calibration data (configs/calibration/spark-s25-measurements.yaml) ingests whole.
TEST(Ingest, ShippedCalibrationData) {
  const std::string path = std::string(LAYOUTX_CONFIG_DIR) + "/calibration/spark-s25-measurements.yaml";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not there yet";
  auto c = open_database(test::temp_path("x.db"));
  IngestContext ctx;
  ctx.device = "galaxy-s25";
  auto r = ingest_file(*c, path, ctx);
  EXPECT_GE(r.layers, 12u);
  EXPECT_EQ(test::rows(*c, "layer_measurements"), static_cast<int64_t>(r.layers));
}

}  // namespace
}  // namespace layoutx::db
