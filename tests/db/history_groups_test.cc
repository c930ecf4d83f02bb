// db::group_history: a key's measurement history shrunk to a bounded number of groups for a plot.
#include "db/history_groups.h"

#include <gtest/gtest.h>


namespace layoutx::db {
namespace {

TEST(HistoryGroups, AShortHistoryIsOneGroupAMeasurement) {
  const std::vector<double> ms{1.0, 1.2, 0.9};
  const auto g = group_history(ms, {"a", "b"}, {false, true, false}, 120);
  ASSERT_EQ(g.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(g[i].first, i);
    EXPECT_EQ(g[i].count, 1u);
    EXPECT_DOUBLE_EQ(g[i].median_ms, ms[i]);
    EXPECT_DOUBLE_EQ(g[i].p10_ms, ms[i]);
  }
  EXPECT_EQ(g[1].regressions, 1u);
  EXPECT_EQ(g[1].first_at, "b");
  EXPECT_EQ(g[2].first_at, "?");  // no ingest time given
}

TEST(HistoryGroups, AMillionMeasurementsAreAtMostTheCapGroupsCoveringEveryOne) {
  std::vector<double> ms(1'000'003);
  for (size_t i = 0; i < ms.size(); ++i) ms[i] = static_cast<double>(i % 1000);  // 0..999 in every block of 1000
  std::vector<bool> bad(ms.size(), false);
  bad[5] = bad[999'999] = true;
  const auto g = group_history(ms, {}, bad, 120);
  ASSERT_LE(g.size(), 120u);
  ASSERT_GE(g.size(), 119u);
  size_t covered = 0, regressions = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    EXPECT_EQ(g[i].first, covered) << "groups are consecutive";
    covered += g[i].count;
    regressions += g[i].regressions;
    EXPECT_LE(g[i].p10_ms, g[i].median_ms);
    EXPECT_LE(g[i].median_ms, g[i].p90_ms);
  }
  EXPECT_EQ(covered, ms.size());
  EXPECT_EQ(regressions, 2u);
}

TEST(HistoryGroups, AGroupsQuantilesAreThoseOfItsOwnMeasurements) {
  std::vector<double> ms(120'000);  // groups of 1000, each holding 999..0 once, shifted by its index
  for (size_t i = 0; i < ms.size(); ++i) ms[i] = static_cast<double>(999 - i % 1000) + static_cast<double>(i / 1000);
  const auto g = group_history(ms, {}, {}, 120);
  ASSERT_EQ(g.size(), 120u);
  for (size_t k : {size_t{0}, size_t{77}}) {
    const double shift = static_cast<double>(k);
    EXPECT_EQ(g[k].count, 1000u);
    EXPECT_DOUBLE_EQ(g[k].median_ms, 500 + shift);  // rank round(0.5 * 999) = 500
    EXPECT_DOUBLE_EQ(g[k].p10_ms, 100 + shift);     // rank round(0.1 * 999) = 100
    EXPECT_DOUBLE_EQ(g[k].p90_ms, 899 + shift);     // rank round(0.9 * 999) = 899
    EXPECT_DOUBLE_EQ(g[k].min_ms, shift);
    EXPECT_DOUBLE_EQ(g[k].max_ms, 999 + shift);
  }
}

TEST(HistoryGroups, NoMeasurementsNoGroupsAndACapOfZeroMeansOne) {
  EXPECT_TRUE(group_history({}, {}, {}, 120).empty());
  const auto g = group_history({3, 1, 2}, {}, {}, 0);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_DOUBLE_EQ(g[0].median_ms, 2);
}

}  // namespace
}  // namespace layoutx::db
