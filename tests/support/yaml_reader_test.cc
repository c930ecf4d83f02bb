#include "support/yaml_reader.h"

#include <gtest/gtest.h>

namespace layoutx {
namespace {

TEST(MapReader, CollectsEveryProblemWithFileLineAndKey) {
  auto node = load_yaml_text("window: -3\nname: [1]\ncolour: red\n", "x.yaml");
  ErrorList errors;
  MapReader r("x.yaml", node, "", errors);
  r.integer("window", true, 1);
  r.string("name", true);
  r.integer("heads", true, 1);
  r.finish();
  ASSERT_EQ(errors.messages().size(), 4u);
  EXPECT_EQ(errors.messages()[0], "x.yaml:1:9: window: must be a positive integer, got -3");
  EXPECT_EQ(errors.messages()[1], "x.yaml:2:7: name: must be a string, got a collection");
  EXPECT_EQ(errors.messages()[2], "x.yaml:1:1: heads: required key is missing");
  EXPECT_EQ(errors.messages()[3], "x.yaml:3:1: colour: unknown key (allowed: heads, name, window)");
}

TEST(MapReader, RepeatedKeyIsAnErrorNamingBothPlaces) {
  auto node = load_yaml_text("window: 4\nname: a\nwindow: 8\n", "x.yaml");
  ErrorList errors;
  MapReader r("x.yaml", node, "", errors);
  ASSERT_EQ(errors.messages().size(), 1u);
  EXPECT_EQ(errors.messages()[0], "x.yaml:3:1: window: key given twice (first at x.yaml:1:1)");
}

TEST(MapReader, IntegersAreCheckedIn64BitsAgainstTheirBounds) {
  auto node = load_yaml_text("a: 4294969344\nb: 99999999999999999999\n", "x.yaml");
  ErrorList errors;
  MapReader r("x.yaml", node, "", errors);
  EXPECT_FALSE(r.integer("a", true, 1, 65536));
  EXPECT_FALSE(r.integer("b", true, 1, 65536));
  ASSERT_EQ(errors.messages().size(), 2u);
  EXPECT_EQ(errors.messages()[0], "x.yaml:1:4: a: must be an integer in [1, 65536], got 4294969344");
  EXPECT_EQ(errors.messages()[1], "x.yaml:2:4: b: must be an integer, got '99999999999999999999'");
}

TEST(LoadYaml, SyntaxErrorNamesTheFile) {
  try {
    load_yaml_text("a: [1, 2\n", "bad.yaml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("bad.yaml:", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace layoutx
