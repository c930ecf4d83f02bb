#include "support/hash.h"

#include <gtest/gtest.h>

namespace layoutx {
namespace {

// Saved ids and cache file names depend on these values: they must not change between builds.
TEST(Hash, Fnv1aKeepsTheValuesSavedIdsWereMadeWith) {
  EXPECT_EQ(fnv1a(""), 1469598103934665603ull);  // the offset basis
  EXPECT_EQ(fnv1a("a"), 4953267810257967366ull);
  EXPECT_EQ(fnv1a("foobar"), 9870438755804841970ull);
}

TEST(Hash, HexKeepsTheLowDigitsZeroPadded) {
  EXPECT_EQ(hex(0xab, 4), "00ab");
  EXPECT_EQ(hex(0x1234567890abcdefull, 8), "90abcdef");
  EXPECT_EQ(hex(0x1234567890abcdefull, 16), "1234567890abcdef");
  EXPECT_EQ(hex(0, 1), "0");
}

}  // namespace
}  // namespace layoutx
