// Error messages carry input text (a CSV field, a YAML scalar): a control byte in it must not cut
// or garble the message. what() is a C string, so a raw NUL used to end it there.
#include "support/error.h"

#include <gtest/gtest.h>

#include <string>

namespace layoutx {
namespace {

TEST(Error, ControlCharactersOfTheInputAreSpelledOut) {
  const std::string field("ri\0ng\x07", 6);
  const Error e("nul.csv:2: layout: unknown preset '" + field + "' (presets: roll, ring)");
  EXPECT_STREQ(e.what(), "nul.csv:2: layout: unknown preset 'ri\\0ng\\x07' (presets: roll, ring)");
  // Newlines (several problems) and tabs stay; spelling twice changes nothing.
  EXPECT_STREQ(Error("a\n\tb\r\x7f").what(), "a\n\tb\\x0d\\x7f");
  EXPECT_EQ(Error::visible_text(Error::visible_text(field)), Error::visible_text(field));
  // Text that is not a control character, UTF-8 included, is kept as it is.
  EXPECT_STREQ(Error("µs — ok").what(), "µs — ok");
}

}  // namespace
}  // namespace layoutx
