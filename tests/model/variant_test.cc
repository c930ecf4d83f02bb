#include <gtest/gtest.h>

#include "model/variant.h"
#include "support/error.h"
#include "tests/error_message.h"

namespace layoutx::model {
namespace {

std::string error_of(auto&& f) { return testing::error_message(f); }

TEST(Variant, PresetsAndKeys) {
  EXPECT_EQ(preset("roll").key(), "precision=fp16");
  EXPECT_EQ(preset("ring", Precision::kW4A16).key(), "returns=new_entry,precision=w4a16");
  EXPECT_EQ(preset("score-join").key(),
            "returns=new_entry,join=scores,precision=fp16");
  EXPECT_EQ(preset("score-join").preset(), "score-join");
}

TEST(Variant, KeyRoundTrips) {
  Variant v = parse_variant("score-join", {"new_value=broadcast_mul", "precision=w8a16", "gelu=tanh"});
  EXPECT_EQ(parse_variant(v.key()), v);
  EXPECT_EQ(v.preset(), "");
}

TEST(Variant, UnknownAxisAndValue) {
  EXPECT_EQ(error_of([] { parse_variant("roll", {"colour=red"}); }),
            "unknown axis 'colour' (axes: returns, join, softmax, new_score, new_value, gelu, precision, kv_dtype, k_layout, weight_quant, sliding_cache, heads, projection)");
  EXPECT_EQ(error_of([] { parse_variant("roll", {"join=values"}); }),
            "join: unknown value 'values' (allowed: keys, scores)");
  EXPECT_NE(error_of([] { parse_variant("rolling"); }).find("unknown preset 'rolling'"), std::string::npos);
}

TEST(Variant, RepeatedAxisInAKeyIsAnError) {
  EXPECT_EQ(error_of([] { parse_variant("returns=window,join=keys,returns=new_entry"); }),
            "variant key: axis 'returns' is given twice in 'returns=window,join=keys,returns=new_entry'");
}

TEST(Variant, MeaninglessCombination) {
  auto msg = error_of([] { parse_variant("ring", {"new_score=mul_reducesum"}); });
  EXPECT_NE(msg.find("new_score=mul_reducesum: applies only with join=scores"), std::string::npos) << msg;
  EXPECT_NO_THROW(parse_variant("score-join", {"new_score=mul_reducesum"}));
}

}  // namespace
}  // namespace layoutx::model
