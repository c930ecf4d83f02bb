// Ingest refuses timings outside (0, 10000] ms, unknown models and sliding layers whose cache is
// shorter than the window they slide over, naming file and row; the database is unchanged.
#include "db/ingest_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "db/ingest.h"
#include "db/schema.h"
#include "support/error.h"
#include "tests/db/db_test_util.h"

namespace layoutx::db {
namespace {

using ::testing::HasSubstr;

std::string refused(const std::string& csv) {
  auto c = open_database(test::temp_path("x.db"));
  IngestContext ctx;
  ctx.device = "galaxy-s25";
  ingest_text(*c, "layer,ctx,variant,precision,ms\nsliding,4096,roll,fp16,1.7\n", "good.csv", ctx);
  const std::string before = test::dump(*c);
  try {
    ingest_text(*c, csv, "bad.csv", ctx);
  } catch (const Error& e) {
    EXPECT_EQ(test::dump(*c), before) << "the database changed";
    return e.what();
  }
  ADD_FAILURE() << "accepted:\n" << csv;
  return "";
}

TEST(IngestChecks, RefusesTimingsOutsideTheRange) {
  const std::string head = "layer,ctx,variant,precision,ms\n";
  EXPECT_THAT(refused(head + "sliding,4096,roll,fp16,1.7\nfull,4096,ring,fp16,0\n"),
              HasSubstr("bad.csv:3: ms: must be in (0, 10000] (one layer's decode step), got 0"));
  EXPECT_THAT(refused(head + "full,4096,ring,fp16,1e308\n"), HasSubstr("bad.csv:2: ms: must be in (0, 10000]"));
  EXPECT_THAT(refused(head + "full,4096,ring,fp16,10000.5\n"), HasSubstr("got 10000.5"));
}

TEST(IngestChecks, RefusesUnknownModels) {
  EXPECT_THAT(refused("layer,ctx,variant,precision,ms,model\nfull,4096,ring,fp16,2.9,spark-x9\n"),
              HasSubstr("bad.csv:2: model: unknown model 'spark-x9' (known: gemma-3-1b, spark-x2.5-1.7b, spark-x2.5-4b)"));
}

TEST(IngestChecks, RefusesASlidingCacheBelowTheWindow) {
  // Spark's window is 512 tokens: a sliding layer keeps at least 511 past entries.
  EXPECT_THAT(refused("layer,ctx,variant,precision,ms,cache_entries\nsliding,4096,roll,fp16,1.7,255\n"),
              HasSubstr("bad.csv:2: cache_entries: 255 is below the sliding window - 1 (511) of spark-x2.5-1.7b"));
}

TEST(IngestChecks, AcceptsTheEdges) {
  EXPECT_NO_THROW(check_layer_rows({{"spark-x2.5-1.7b", "sliding", 511, 10000.0, 1},
                                    {"spark-x2.5-1.7b", "full", 100, 1e-6, 2}},
                                   "edges.csv"));
}

}  // namespace
}  // namespace layoutx::db
