#include "frontend/npy.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string_view>

#include "core/error.h"
#include "core/file_reader.h"
#include "core/files.h"
#include "core/memory.h"

namespace lockstep {

static_assert(std::endian::native == std::endian::little, "lockstep assumes a little-endian host");

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

// What the header dict says, before it is turned into a Tensor.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
};

// Recursive-descent reader for the Python literal NumPy writes:
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& what) : s_(text), what_(what) {}

  NpyHeader parse() {
    NpyHeader h;
    std::map<std::string, bool> seen;
    expect('{');
    while (!peek('}')) {
      std::string key = string_literal();
      expect(':');
      if (seen[key]) fail("key '" + key + "' appears twice");
      seen[key] = true;
      if (key == "descr") {
        if (peek('[')) throw Unsupported(what_ + ": structured (record) arrays are not supported");
        h.descr = string_literal();
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
      } else if (key == "shape") {
        h.shape = tuple();
      } else {
        fail("unexpected key '" + key + "'");
      }
      if (!peek('}')) expect(',');
    }
    expect('}');
    skip_space();
    if (pos_ != s_.size()) fail("text after the header dictionary");
    for (const char* k : {"descr", "fortran_order", "shape"})
      if (!seen[k]) fail(std::string("header has no '") + k + "'");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const {
    throw Error(what_ + ": corrupt .npy header (" + msg + ")");
  }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool peek(char c) {
    skip_space();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  void expect(char c) {
    if (!peek(c)) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string string_literal() {
    skip_space();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) fail("expected a quoted string");
    char q = s_[pos_++];
    size_t end = s_.find(q, pos_);
    if (end == std::string::npos) fail("unterminated string");
    std::string r = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return r;
  }
  bool boolean() {
    skip_space();
    for (auto [word, v] : {std::pair{"True", true}, std::pair{"False", false}}) {
      size_t n = std::strlen(word);
      if (s_.compare(pos_, n, word) == 0) { pos_ += n; return v; }
    }
    fail("fortran_order is not True or False");
  }
  int64_t integer() {
    skip_space();
    size_t start = pos_;
    int64_t v = 0;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) fail("dimension too large");
      v = v * 10 + (s_[pos_++] - '0');
    }
    if (pos_ == start) fail("shape holds something other than non-negative integers");
    if (pos_ < s_.size() && s_[pos_] == 'L') ++pos_;  // Python 2 long literal
    return v;
  }
  Shape tuple() {
    Shape dims;
    expect('(');
    while (!peek(')')) {
      dims.push_back(integer());
      if (!peek(')')) expect(',');
    }
    expect(')');
    return dims;
  }

  const std::string& s_;
  const std::string& what_;
  size_t pos_ = 0;
};

// The dtype named by a descr such as '<f4'; sets `swap` for big-endian multi-byte data.
DType dtype_from_descr(const std::string& descr, bool& swap, const std::string& what) {
  if (descr.size() < 2) throw Error(what + ": corrupt .npy header (dtype '" + descr + "')");
  char order = descr[0], kind = descr[1];
  if (order != '<' && order != '>' && order != '|' && order != '=')
    throw Error(what + ": corrupt .npy header (dtype '" + descr + "')");
  std::string size = descr.substr(2);
  if (kind == 'O') throw Unsupported(what + ": object arrays are not supported (dtype '" + descr + "')");
  if (kind == 'U' || kind == 'S' || kind == 'a')
    throw Unsupported(what + ": string arrays are not supported (dtype '" + descr + "')");
  static const std::map<std::string, DType> known = {
      {"b1", DType::boolean}, {"i1", DType::i8}, {"u1", DType::u8},
      {"i2", DType::i16}, {"u2", DType::u16}, {"i4", DType::i32}, {"u4", DType::u32},
      {"i8", DType::i64}, {"u8", DType::u64}, {"f2", DType::f16}, {"f4", DType::f32},
      {"f8", DType::f64}};
  auto it = known.find(std::string(1, kind) + size);
  if (it == known.end())
    throw Unsupported(what + ": dtype '" + descr + "' is not supported (numeric and bool only)");
  swap = order == '>' && dtype_size(it->second) > 1;
  return it->second;
}

// NumPy's descr for a dtype: '<f4', '|b1', ...
std::string descr_of(DType t) {
  switch (t) {
    case DType::boolean: return "|b1";
    case DType::i8: return "|i1";
    case DType::u8: return "|u1";
    case DType::i16: return "<i2";
    case DType::u16: return "<u2";
    case DType::i32: return "<i4";
    case DType::u32: return "<u4";
    case DType::i64: return "<i8";
    case DType::u64: return "<u8";
    case DType::f16: return "<f2";
    case DType::f32: return "<f4";
    case DType::f64: return "<f8";
    default: throw Error(std::string("dtype ") + dtype_name(t) + " has no .npy equivalent");
  }
}

uint32_t read_le(const std::string& b, size_t at, size_t n) {
  uint32_t v = 0;
  for (size_t k = 0; k < n; ++k) v |= static_cast<uint32_t>(static_cast<uint8_t>(b[at + k])) << (8 * k);
  return v;
}

// Element count of `shape`, or -1 when it overflows int64.
int64_t checked_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

void byteswap_elements(std::vector<uint8_t>& bytes, size_t item) {
  for (size_t k = 0; k + item <= bytes.size(); k += item)
    std::reverse(bytes.begin() + k, bytes.begin() + k + item);
}

// Column-major storage -> row-major: walks Fortran order, first index fastest.
std::vector<uint8_t> fortran_to_c(const std::vector<uint8_t>& src, const Shape& shape, size_t item) {
  std::vector<uint8_t> dst(src.size());
  std::vector<int64_t> strides = shape_strides(shape), idx(shape.size(), 0);
  int64_t n = shape_numel(shape);
  for (int64_t k = 0; k < n; ++k) {
    int64_t c = 0;
    for (size_t a = 0; a < shape.size(); ++a) c += idx[a] * strides[a];
    std::memcpy(&dst[c * item], &src[k * item], item);
    for (size_t a = 0; a < shape.size() && ++idx[a] == shape[a]; ++a) idx[a] = 0;
  }
  return dst;
}

}  // namespace

namespace {

// Where the data starts and what it holds, from the header alone.
struct NpyLayout {
  size_t data_start = 0;
  NpyHeader header;
  DType dtype = DType::undefined;
  bool swap = false;
  uint64_t data_bytes = 0;
};

// A header longer than this is refused before it is read (NumPy writes a few hundred bytes).
constexpr size_t kMaxHeaderBytes = 1 << 20;

// Parses the preamble and header from the front of `b`. With `need_more`, a `b` that is only
// the front of the file is fine: it reports the bytes still needed to finish the header.
NpyLayout parse_layout(const std::string& b, const std::string& what, size_t* need_more = nullptr) {
  auto short_of = [&](size_t n) {
    if (!need_more) throw Error(what + ": truncated .npy header");
    *need_more = n - b.size();
    return NpyLayout{};
  };
  if (b.size() < kMagicLen) return short_of(kMagicLen);
  if (b.compare(0, kMagicLen, kMagic, kMagicLen) != 0) throw Error(what + ": not a .npy file (bad magic)");
  if (b.size() < 10) return short_of(10);
  int major = static_cast<uint8_t>(b[6]);
  if (major < 1 || major > 3)
    throw Unsupported(what + ": .npy format version " + std::to_string(major) + " is not supported (1-3)");
  size_t len_bytes = major == 1 ? 2 : 4;
  size_t start = 8 + len_bytes;
  if (b.size() < start) return short_of(start);
  size_t header_len = read_le(b, 8, len_bytes);
  if (header_len > kMaxHeaderBytes)
    throw Error(what + ": .npy header of " + std::to_string(header_len) + " bytes is too long");
  if (b.size() - start < header_len) return short_of(start + header_len);
  if (need_more) *need_more = 0;
  NpyLayout l;
  l.data_start = start + header_len;
  l.header = HeaderParser(b.substr(start, header_len), what).parse();
  l.dtype = dtype_from_descr(l.header.descr, l.swap, what);
  int64_t n = checked_numel(l.header.shape);
  size_t item = dtype_size(l.dtype);
  if (n < 0 || static_cast<uint64_t>(n) > std::numeric_limits<uint64_t>::max() / item)
    throw Error(what + ": .npy shape " + shape_str(l.header.shape) + " is too large");
  l.data_bytes = static_cast<uint64_t>(n) * item;
  return l;
}

std::string size_mismatch(const NpyLayout& l, uint64_t have, const std::string& what) {
  return what + ": .npy data is " + std::to_string(have) + " bytes, but " + dtype_name(l.dtype) +
         shape_str(l.header.shape) + " needs " + std::to_string(l.data_bytes) + " (truncated or corrupt?)";
}

}  // namespace

namespace {

// The array a parsed header describes, from exactly its data bytes (checked by the caller).
Tensor array_of(const NpyLayout& l, std::string_view data) {
  size_t item = dtype_size(l.dtype);
  Tensor t;
  t.dtype = l.dtype;
  t.shape = l.header.shape;
  t.bytes.assign(data.begin(), data.end());
  if (l.swap) byteswap_elements(t.bytes, item);
  if (l.header.fortran_order && l.header.shape.size() > 1) t.bytes = fortran_to_c(t.bytes, t.shape, item);
  if (t.dtype == DType::boolean)
    for (auto& v : t.bytes) v = v != 0;  // NumPy reads any non-zero byte as True
  return t;
}

}  // namespace

Tensor parse_npy(const std::string& b, const std::string& what) {
  NpyLayout l = parse_layout(b, what);
  size_t data_len = b.size() - l.data_start;
  if (data_len != l.data_bytes) throw Error(size_mismatch(l, data_len, what));
  return array_of(l, std::string_view(b).substr(l.data_start));
}

// The header first, then exactly the bytes it declares: a device or pipe is never read past
// them, and a regular file whose size disagrees is refused before its data is read.
Tensor read_npy(const std::string& path) {
  std::string what = ".npy file '" + path + "'";
  FileReader f(path, what);
  std::string b;
  NpyLayout l;
  for (size_t more = kMagicLen; more > 0;) {
    std::string got = f.read_up_to(more);
    if (got.size() < more) throw Error(what + ": truncated .npy header");
    b += got;
    l = parse_layout(b, what, &more);  // the layout once `more` reaches 0
  }
  if (f.regular() && static_cast<uint64_t>(f.size()) - b.size() != l.data_bytes)
    throw Error(size_mismatch(l, static_cast<uint64_t>(f.size()) - b.size(), what));
  // Its bytes are held twice (as read, then as the tensor) before any of them is read.
  require_memory(checked_bytes(static_cast<int64_t>(std::min<uint64_t>(l.data_bytes, INT64_MAX / 2)), 2), what);
  std::string data = f.read_up_to(l.data_bytes);
  if (data.size() != l.data_bytes) throw Error(size_mismatch(l, data.size(), what));
  if (!f.at_end()) throw Error(what + ": holds more data than its header declares (" + std::to_string(l.data_bytes) + " bytes)");
  return array_of(l, data);
}

std::string encode_npy(const Tensor& t) {
  std::string shape = "(";
  for (size_t k = 0; k < t.shape.size(); ++k) shape += std::to_string(t.shape[k]) + ", ";
  if (t.shape.size() > 1) shape.resize(shape.size() - 2);
  else if (t.shape.size() == 1) shape.pop_back();  // "(3,)"
  shape += ")";
  std::string dict = "{'descr': '" + descr_of(t.dtype) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Spaces then '\n' so the data starts on a 64-byte boundary, as NumPy does.
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  if (dict.size() > 0xffff) throw Error("shape " + shape_str(t.shape) + " is too long for a .npy 1.0 header");
  std::string out(kMagic, kMagicLen);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>(dict.size() >> 8);
  out += dict;
  out.append(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
  return out;
}

void write_npy(const std::string& path, const Tensor& t) {
  write_file_atomic(path, encode_npy(t));
}

}  // namespace lockstep
