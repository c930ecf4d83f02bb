#include "support/json_writer.h"

#include <gtest/gtest.h>

#include <sstream>

namespace layoutx {
namespace {

TEST(JsonWriter, NestsAndEscapes) {
  std::ostringstream os;
  JsonWriter w(os, false);
  w.begin_object().field("a", 1).field("s", std::string("q\"\n")).key("l").begin_array();
  w.value(1.5).value(true).null().end_array().end_object();
  EXPECT_EQ(os.str(), "{\"a\":1,\"s\":\"q\\\"\\n\",\"l\":[1.5,true,null]}");
}

TEST(JsonWriter, NonFiniteIsNull) {
  std::ostringstream os;
  JsonWriter w(os, false);
  w.begin_array().value(1.0 / 0.0).end_array();
  EXPECT_EQ(os.str(), "[null]");
}

}  // namespace
}  // namespace layoutx
