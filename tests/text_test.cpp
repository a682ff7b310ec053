// Strings from a model made safe to show: control characters escaped, invalid UTF-8 replaced.
#include <gtest/gtest.h>

#include <sstream>

#include "core/text.h"

namespace lockstep {
namespace {

TEST(Text, ControlCharactersBecomeEscapes) {
  EXPECT_EQ(printable("a\nb\tc\rd"), "a\\nb\\tc\\rd");
  EXPECT_EQ(printable(std::string("\x1b[2J\x07\x7f", 6)), "\\x1b[2J\\x07\\x7f");
  EXPECT_EQ(printable(std::string("x\0y", 3)), "x\\x00y");
  EXPECT_EQ(printable("\xc2\x9b"
                      "31m"),
            "\\x9b31m");  // C1 CSI, as UTF-8
  EXPECT_EQ(printable("a\nb\tc", true), "a\nb\tc");
}

TEST(Text, ValidUtf8StaysAndInvalidBytesAreReplaced) {
  EXPECT_EQ(printable("Zoë 語 🙂"), "Zoë 語 🙂");
  EXPECT_EQ(valid_utf8("a\xff"
                       "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(valid_utf8("\xc0\xaf"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong '/'
  EXPECT_EQ(valid_utf8("\xed\xa0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  EXPECT_EQ(valid_utf8("\xe8\xaa"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // cut short
  EXPECT_EQ(valid_utf8("tab\there"), "tab\there");                                // only the encoding
}

// A stream filter sees a multi-byte character split across writes and flushes whole.
TEST(Text, PrintableStreamEscapesAndKeepsSplitCharacters) {
  std::ostringstream os;
  {
    PrintableStream filter(os);
    os << "a\x1b"
       << "\xe8" << std::flush << "\xaa\x9e\n"
       << "end";
  }
  EXPECT_EQ(os.str(), "a\\x1b\xe8\xaa\x9e\nend");
}

}  // namespace
}  // namespace lockstep
