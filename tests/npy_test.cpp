// .npy reading and writing, against headers and data built by hand from NumPy's format spec.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "frontend/npy.h"

using namespace lockstep;
namespace fs = std::filesystem;

namespace {

// A .npy file of `major` version: magic, version, little-endian header length, header, data.
std::string make_npy(int major, const std::string& header, const std::string& data) {
  std::string b = "\x93NUMPY";
  b += static_cast<char>(major);
  b += '\0';
  size_t n = header.size();
  int len_bytes = major == 1 ? 2 : 4;
  for (int k = 0; k < len_bytes; ++k) b += static_cast<char>((n >> (8 * k)) & 0xff);
  return b + header + data;
}

template <class T> std::string le_bytes(std::initializer_list<T> vals) {
  std::string s;
  for (T v : vals) s.append(reinterpret_cast<const char*>(&v), sizeof(T));
  return s;
}

template <class T> std::vector<T> values(const Tensor& t) {
  std::vector<T> v(t.numel());
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

std::string error_of(const std::string& bytes) {
  try {
    parse_npy(bytes, "'x.npy'");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

fs::path temp_dir(const char* name) {
  fs::path d = fs::temp_directory_path() / ("lockstep_npy_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST(Npy, RoundTripEveryDtype) {
  for (DType t : {DType::boolean, DType::i8, DType::u8, DType::i16, DType::u16, DType::i32,
                  DType::u32, DType::i64, DType::u64, DType::f16, DType::f32, DType::f64}) {
    Tensor x(t, {2, 3});
    for (size_t k = 0; k < x.bytes.size(); ++k) x.bytes[k] = static_cast<uint8_t>(k * 37 + 11);
    if (t == DType::boolean) for (auto& b : x.bytes) b &= 1;
    Tensor y = parse_npy(encode_npy(x), "mem");
    EXPECT_EQ(y.dtype, t) << dtype_name(t);
    EXPECT_EQ(y.shape, x.shape) << dtype_name(t);
    EXPECT_EQ(y.bytes, x.bytes) << dtype_name(t);
  }
}

TEST(Npy, WritesVersion1HeaderAlignedTo64) {
  Tensor x(DType::f32, {2, 3});
  std::string b = encode_npy(x);
  ASSERT_GE(b.size(), 10u);
  EXPECT_EQ(b.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  size_t hlen = static_cast<uint8_t>(b[8]) | (static_cast<uint8_t>(b[9]) << 8);
  EXPECT_EQ((10 + hlen) % 64, 0u);
  EXPECT_EQ(b.size(), 10 + hlen + 24);
  std::string header = b.substr(10, hlen);
  EXPECT_EQ(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 0), 0u);
  EXPECT_EQ(header.back(), '\n');
}

TEST(Npy, ScalarAndVectorShapes) {
  Tensor s(DType::f64, {});
  double v = 2.5;
  std::memcpy(s.bytes.data(), &v, 8);
  std::string b = encode_npy(s);
  EXPECT_NE(b.find("'shape': ()"), std::string::npos);
  Tensor s2 = parse_npy(b, "mem");
  EXPECT_TRUE(s2.shape.empty());
  EXPECT_EQ(values<double>(s2), std::vector<double>{2.5});

  Tensor vec(DType::i64, {3});
  EXPECT_NE(encode_npy(vec).find("'shape': (3,)"), std::string::npos);
  EXPECT_EQ(parse_npy(encode_npy(vec), "mem").shape, Shape{3});

  Tensor empty(DType::f32, {0, 4});
  Tensor e2 = parse_npy(encode_npy(empty), "mem");
  EXPECT_EQ(e2.shape, (Shape{0, 4}));
  EXPECT_TRUE(e2.bytes.empty());
}

TEST(Npy, ReadsVersions1To3) {
  std::string data = le_bytes<float>({1.0f, -2.0f, 3.5f});
  for (int major : {1, 2, 3}) {
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }          \n";
    Tensor t = parse_npy(make_npy(major, header, data), "mem");
    EXPECT_EQ(t.dtype, DType::f32);
    EXPECT_EQ(t.shape, Shape{3});
    EXPECT_EQ(values<float>(t), (std::vector<float>{1.0f, -2.0f, 3.5f})) << "version " << major;
  }
}

TEST(Npy, AcceptsKeyOrderDoubleQuotesAndPython2Longs) {
  std::string header = "{\"shape\": (2L, 1L), \"fortran_order\": False, \"descr\": \"<i2\"}\n";
  Tensor t = parse_npy(make_npy(1, header, le_bytes<int16_t>({-7, 300})), "mem");
  EXPECT_EQ(t.shape, (Shape{2, 1}));
  EXPECT_EQ(values<int16_t>(t), (std::vector<int16_t>{-7, 300}));
}

TEST(Npy, FortranOrder2D) {
  // a = [[1,2,3],[4,5,6]] stored column by column: 1,4,2,5,3,6.
  std::string header = "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }\n";
  Tensor t = parse_npy(make_npy(1, header, le_bytes<int32_t>({1, 4, 2, 5, 3, 6})), "mem");
  EXPECT_EQ(values<int32_t>(t), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
}

TEST(Npy, FortranOrder3D) {
  // a[i,j,k] = 100i + 10j + k for shape (2,3,4); Fortran storage puts it at i + 2j + 6k.
  std::vector<double> fstore(24);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) fstore[i + 2 * j + 6 * k] = 100 * i + 10 * j + k;
  std::string data(reinterpret_cast<const char*>(fstore.data()), 24 * 8);
  std::string header = "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3, 4), }\n";
  std::vector<double> got = values<double>(parse_npy(make_npy(1, header, data), "mem"));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) EXPECT_EQ(got[i * 12 + j * 4 + k], 100 * i + 10 * j + k);
}

TEST(Npy, BigEndian) {
  std::string i4 = make_npy(1, "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }\n",
                            std::string("\x00\x00\x01\x02\xff\xff\xff\xfe", 8));
  EXPECT_EQ(values<int32_t>(parse_npy(i4, "mem")), (std::vector<int32_t>{258, -2}));
  // 1.5 = 0x3FF8000000000000; float16 -2.0 = 0xC000.
  std::string f8 = make_npy(2, "{'descr': '>f8', 'fortran_order': False, 'shape': (), }\n",
                            std::string("\x3f\xf8\0\0\0\0\0\0", 8));
  EXPECT_EQ(values<double>(parse_npy(f8, "mem")), std::vector<double>{1.5});
  std::string f2 = make_npy(1, "{'descr': '>f2', 'fortran_order': False, 'shape': (1,), }\n",
                            std::string("\xc0\x00", 2));
  Tensor h = parse_npy(f2, "mem");
  EXPECT_EQ(h.dtype, DType::f16);
  EXPECT_EQ(half_to_float(values<uint16_t>(h)[0]), -2.0f);
}

TEST(Npy, BigEndianFortranOrder) {
  // [[1,2],[3,4]] as big-endian uint16, column-major: 1,3,2,4.
  std::string data("\0\x01\0\x03\0\x02\0\x04", 8);
  std::string b = make_npy(1, "{'descr': '>u2', 'fortran_order': True, 'shape': (2, 2), }\n", data);
  EXPECT_EQ(values<uint16_t>(parse_npy(b, "mem")), (std::vector<uint16_t>{1, 2, 3, 4}));
}

TEST(Npy, BoolReadsNonZeroAsTrue) {
  std::string b = make_npy(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }\n",
                           std::string("\x00\x01\x05", 3));
  Tensor t = parse_npy(b, "mem");
  EXPECT_EQ(t.dtype, DType::boolean);
  EXPECT_EQ(t.bytes, (std::vector<uint8_t>{0, 1, 1}));
}

TEST(Npy, RejectsBadFiles) {
  const std::string ok_header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";
  const std::string ok_data = le_bytes<float>({1, 2});
  std::string good = make_npy(1, ok_header, ok_data);
  ASSERT_EQ(error_of(good), "");
  EXPECT_NE(error_of("PK\x03\x04 not npy").find("bad magic"), std::string::npos);
  EXPECT_NE(error_of(good.substr(0, 9)).find("truncated"), std::string::npos);
  EXPECT_NE(error_of(good.substr(0, 30)).find("truncated"), std::string::npos);
  EXPECT_NE(error_of(good.substr(0, good.size() - 1)).find("needs 8"), std::string::npos);
  EXPECT_NE(error_of(good + "x").find("needs 8"), std::string::npos);
  auto with_header = [&](const std::string& h) { return error_of(make_npy(1, h, ok_data)); };
  EXPECT_NE(with_header("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }").find("object arrays"),
            std::string::npos);
  EXPECT_NE(with_header("{'descr': '<U1', 'fortran_order': False, 'shape': (2,), }").find("string arrays"),
            std::string::npos);
  EXPECT_NE(with_header("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }").find("structured"),
            std::string::npos);
  EXPECT_NE(with_header("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }").find("not supported"),
            std::string::npos);
  EXPECT_NE(with_header("{'descr': '<f4', 'shape': (2,), }").find("fortran_order"), std::string::npos);
  EXPECT_NE(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }").find("corrupt"),
            std::string::npos);
  EXPECT_NE(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)").find("corrupt"),
            std::string::npos);
  EXPECT_NE(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}").find("unexpected key"),
            std::string::npos);
  std::string v4 = good;
  v4[6] = 4;
  EXPECT_NE(error_of(v4).find("version 4"), std::string::npos);
  // Every error names the source.
  EXPECT_NE(error_of(good.substr(0, 20)).find("'x.npy'"), std::string::npos);
}

TEST(Npy, HugeShapeIsAnErrorNotAnAllocation) {
  std::string b = make_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }\n", "");
  EXPECT_NE(error_of(b).find("too large"), std::string::npos);
}

TEST(Npy, FileRoundTripAndErrorsNameTheFile) {
  fs::path d = temp_dir("file");
  Tensor x(DType::i32, {2, 2});
  for (int k = 0; k < 4; ++k) x.data<int32_t>()[k] = k * k - 3;
  std::string p = (d / "x.npy").string();
  write_npy(p, x);
  Tensor y = read_npy(p);
  EXPECT_EQ(y.bytes, x.bytes);

  std::string missing = (d / "missing.npy").string();
  try {
    read_npy(missing);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos);
  }
  std::string bytes = encode_npy(x);
  std::string cut = (d / "cut.npy").string();
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() - 3);
  try {
    read_npy(cut);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(cut), std::string::npos);
  }
  fs::remove_all(d);
}

TEST(Npy, AtomicWriteReplacesWholeFileAndLeavesNoTemporaries) {
  fs::path d = temp_dir("atomic");
  std::string p = (d / "out.npy").string();
  std::ofstream(p) << "old contents";
  Tensor x(DType::u8, {5});
  write_npy(p, x);
  EXPECT_EQ(read_npy(p).shape, Shape{5});
  EXPECT_EQ(std::distance(fs::directory_iterator(d), fs::directory_iterator()), 1);
  // A folder that does not exist: an Error naming the path, and nothing created.
  std::string bad = (d / "no_such_dir" / "y.npy").string();
  try {
    write_npy(bad, x);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(d / "no_such_dir"));
  fs::remove_all(d);
}

TEST(Npy, Bfloat16HasNoNpyDtype) {
  EXPECT_THROW(encode_npy(Tensor(DType::bf16, {1})), Error);
}
