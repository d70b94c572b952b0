// Untrusted text shown to people: bidirectional controls are escaped, never obeyed, on terminals
// (Quote, Printable) and in pages (HtmlEscape); other text stays as it is.
#include "kforge/common/text.h"

#include <gtest/gtest.h>

#include <string>

#include "kforge/common/html.h"

namespace kforge::common {
namespace {

TEST(TextTest, BidiControlsAreShownEscaped) {
  struct Case {
    std::string raw;
    std::string shown;
  };
  const Case cases[] = {
      {"\xe2\x80\xae", "\\u202e"},  // RIGHT-TO-LEFT OVERRIDE
      {"\xe2\x80\xaa", "\\u202a"},  // LEFT-TO-RIGHT EMBEDDING
      {"\xe2\x81\xa6", "\\u2066"},  // LEFT-TO-RIGHT ISOLATE
      {"\xe2\x81\xa9", "\\u2069"},  // POP DIRECTIONAL ISOLATE
      {"\xe2\x80\x8f", "\\u200f"},  // RIGHT-TO-LEFT MARK
      {"\xd8\x9c", "\\u061c"},      // ARABIC LETTER MARK
  };
  for (const Case& c : cases) {
    const std::string text = "teacher" + c.raw + "gpt";
    EXPECT_EQ(Printable(text), "teacher" + c.shown + "gpt") << c.shown;
    EXPECT_EQ(Quote(text), "\"teacher" + c.shown + "gpt\"") << c.shown;
    EXPECT_EQ(HtmlEscape(text), "teacher" + c.shown + "gpt") << c.shown;
  }
  // Neighbours that are no controls stay: an en dash (U+2013), a euro sign, Arabic letters.
  for (const std::string text : {"a\xe2\x80\x93z", "\xe2\x82\xac", "\xd8\xa8\xd8\xa7"}) {
    EXPECT_EQ(Printable(text), text);
    EXPECT_EQ(HtmlEscape(text), text);
  }
  EXPECT_EQ(Printable("\xe2\x80"), "\\xe2\\x80") << "a cut sequence is no control";
}

}  // namespace
}  // namespace kforge::common
