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
