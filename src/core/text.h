// Strings a model or a user controls, made safe to show: on a terminal, in a log line, in JSON
// or HTML. Control characters become visible escapes and invalid UTF-8 becomes U+FFFD, so a
// name can neither move the cursor, retitle a terminal nor forge a line of its own.
#pragma once
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

namespace lockstep {

// `s` with every control character (C0, DEL, C1) written as an escape ("\n", "\x1b") and
// every byte that is not part of valid UTF-8 replaced by U+FFFD. With `keep_newlines`, '\n'
// and '\t' stay (a multi-line message whose parts are escaped already).
std::string printable(std::string_view s, bool keep_newlines = false);

// `s` with invalid UTF-8 replaced by U+FFFD and nothing else changed (JSON needs valid UTF-8).
std::string valid_utf8(std::string_view s);

// Puts a filter in front of `os` for as long as the returned object lives: everything written
// to `os` goes through printable(..., keep_newlines = true), one line at a time.
class PrintableStream {
 public:
  explicit PrintableStream(std::ostream& os);
  ~PrintableStream();
  PrintableStream(const PrintableStream&) = delete;
  PrintableStream& operator=(const PrintableStream&) = delete;

 private:
  class Buf;
  std::ostream& os_;
  std::streambuf* old_;
  std::unique_ptr<Buf> buf_;
};

}  // namespace lockstep
