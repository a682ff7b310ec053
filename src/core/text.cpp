#include "core/text.h"

#include <streambuf>

namespace lockstep {

namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 (overlong forms, surrogates and
// code points past U+10FFFF are invalid).
size_t utf8_length(std::string_view s, size_t i) {
  auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = at(i);
  if (c < 0x80) return 1;
  size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (!n || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((at(i + k) & 0xC0) != 0x80) return 0;
  if (c == 0xE0 && at(i + 1) < 0xA0) return 0;   // overlong
  if (c == 0xED && at(i + 1) >= 0xA0) return 0;  // surrogate
  if (c == 0xF0 && at(i + 1) < 0x90) return 0;   // overlong
  if (c == 0xF4 && at(i + 1) >= 0x90) return 0;  // past U+10FFFF
  return n;
}

constexpr const char* kReplacement = "\xEF\xBF\xBD";

std::string hex_escape(unsigned c) {
  static const char* hex = "0123456789abcdef";
  return std::string("\\x") + hex[(c >> 4) & 15] + hex[c & 15];
}

std::string sanitize(std::string_view s, bool escape, bool keep_newlines) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_length(s, i);
    if (!n) {
      out += kReplacement;
      ++i;
      continue;
    }
    unsigned char c = static_cast<unsigned char>(s[i]);
    bool c1 = n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0;  // U+0080..U+009F
    if (escape && (c < 0x20 || c == 0x7F || c1) && !(keep_newlines && (c == '\n' || c == '\t'))) {
      out += c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : hex_escape(c1 ? s[i + 1] : c);
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

}  // namespace

std::string printable(std::string_view s, bool keep_newlines) { return sanitize(s, true, keep_newlines); }

std::string valid_utf8(std::string_view s) { return sanitize(s, false, false); }

// Holds what is written until a line ends (or the stream is flushed), then passes it on
// escaped; an incomplete UTF-8 sequence at a flush waits for the bytes that complete it.
class PrintableStream::Buf : public std::streambuf {
 public:
  explicit Buf(std::streambuf* to) : to_(to) {}
  ~Buf() override { pass(true); }

 protected:
  int_type overflow(int_type c) override {
    if (c == traits_type::eof()) return traits_type::not_eof(c);
    held_ += static_cast<char>(c);
    if (c == '\n') pass(false);
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    held_.append(s, static_cast<size_t>(n));
    if (held_.find('\n') != std::string::npos) pass(false);
    return n;
  }
  int sync() override {
    pass(false);
    return to_->pubsync();
  }

 private:
  void pass(bool all) {
    size_t keep = 0;  // a multi-byte sequence cut at the end, completed by the next write
    if (!all)
      for (size_t back = 1; back <= 3 && back <= held_.size(); ++back) {
        unsigned char c = static_cast<unsigned char>(held_[held_.size() - back]);
        if ((c & 0xC0) == 0x80) continue;
        size_t want = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        if (want > back) keep = back;
        break;
      }
    std::string out = printable(std::string_view(held_).substr(0, held_.size() - keep), true);
    to_->sputn(out.data(), static_cast<std::streamsize>(out.size()));
    held_.erase(0, held_.size() - keep);
  }
  std::streambuf* to_;
  std::string held_;
};

PrintableStream::PrintableStream(std::ostream& os) : os_(os), old_(os.rdbuf()), buf_(std::make_unique<Buf>(old_)) {
  os_.rdbuf(buf_.get());
}

PrintableStream::~PrintableStream() {
  os_.flush();
  os_.rdbuf(old_);
}

}  // namespace lockstep
