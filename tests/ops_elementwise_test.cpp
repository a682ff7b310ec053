// Elementwise and generator ops on the reference interpreter and in shape inference, checked
// against hand-computed values and loops written here (not against the code under test).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>

#include "test_util.h"
#include "core/error.h"
#include "ops/infer.h"
#include "ref/interpreter.h"

namespace lockstep {
namespace {

// A small graph built node by node; graph inputs are fed at run time.
struct Net {
  Graph g;
  TensorMap feed;

  explicit Net(int opset) { g.opset = opset; }
  int input(const std::string& name, DType dt, Shape shape, std::vector<double> data = {}) {
    int v = g.add_value(name, TypeInfo{dt, true, shape});
    for (int64_t d : shape) g.values[v].declared.push_back(Dim{d, d < 0 ? "T" : ""});
    g.inputs.push_back(v);
    if (shape_numel(shape) < 0) return v;  // symbolic: only for inference
    RefTensor r(dt, shape);
    for (size_t k = 0; k < data.size(); ++k) r.set(static_cast<int64_t>(k), data[k]);
    feed[name] = from_ref(r);
    return v;
  }
  int node(const std::string& op, const std::vector<int>& ins,
           std::map<std::string, Attr> attrs = {}) {
    int idx = static_cast<int>(g.nodes.size());
    Node n{"the_" + op, op, "", ins, {}, std::move(attrs), "the_" + op};  // id: how messages name it
    int out = g.add_value(op + "_out" + std::to_string(idx));
    g.values[out].producer = idx;
    n.outputs.push_back(out);
    g.nodes.push_back(n);
    return out;
  }
  RefTensor run(int out) {
    g.outputs = {out};
    return run_reference(g, feed).at(0);
  }
  GraphTypes infer(int out) {
    g.outputs = {out};
    return infer_graph(g);
  }
};

Attr integer(int64_t v) { Attr a; a.kind = Attr::Int; a.i = v; return a; }
Attr real(double v) { Attr a; a.kind = Attr::Float; a.f = v; return a; }
Attr ints(std::vector<int64_t> v) { Attr a; a.kind = Attr::Ints; a.ints = std::move(v); return a; }
Attr string_attr(std::string v) {
  Attr a;
  a.kind = Attr::String;
  a.s = std::move(v);
  return a;
}

using testing::error_of;

TEST(Elementwise, BroadcastAddMatchesNestedLoops) {
  // a: [2,1,3], b: [4,1] -> [2,4,3]; y[i,j,k] = a[i,0,k] + b[j,0].
  std::vector<double> a = {1, 2, 3, 10, 20, 30}, b = {100, 200, 300, 400};
  Net n(14);
  int y = n.node("Add", {n.input("a", DType::f32, {2, 1, 3}, a), n.input("b", DType::f32, {4, 1}, b)});
  RefTensor r = n.run(y);
  ASSERT_EQ(r.shape, (Shape{2, 4, 3}));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) EXPECT_EQ(r.f[(i * 4 + j) * 3 + k], a[i * 3 + k] + b[j]);
}

TEST(Elementwise, WhereBroadcastsThreeWays) {
  // cond [2,1] picks rows, x [1,3], y scalar.
  Net n(16);
  int c = n.input("c", DType::boolean, {2, 1}, {1, 0});
  int x = n.input("x", DType::i32, {1, 3}, {1, 2, 3});
  int z = n.input("z", DType::i32, {}, {-7});
  RefTensor r = n.run(n.node("Where", {c, x, z}));
  ASSERT_EQ(r.shape, (Shape{2, 3}));
  EXPECT_EQ(r.i, (std::vector<int64_t>{1, 2, 3, -7, -7, -7}));
}

TEST(Elementwise, IntegerArithmeticWrapsToTheDtype) {
  Net n(14);
  int a = n.input("a", DType::i8, {3}, {100, -128, 127});
  int b = n.input("b", DType::i8, {3}, {100, 1, 1});
  EXPECT_EQ(n.run(n.node("Add", {a, b})).i, (std::vector<int64_t>{-56, -127, -128}));  // 200-256
  EXPECT_EQ(n.run(n.node("Sub", {a, b})).i, (std::vector<int64_t>{0, 127, 126}));     // -129+256
  EXPECT_EQ(n.run(n.node("Neg", {a})).i, (std::vector<int64_t>{-100, -128, -127}));    // -(-128) wraps
  int p = n.input("p", DType::u8, {2}, {200, 3});
  int q = n.input("q", DType::u8, {2}, {100, 5});
  EXPECT_EQ(n.run(n.node("Add", {p, q})).i, (std::vector<int64_t>{44, 8}));   // 300-256
  EXPECT_EQ(n.run(n.node("Sub", {q, p})).i, (std::vector<int64_t>{156, 2}));  // -100+256
  int big = n.input("big", DType::i32, {1}, {65536});
  EXPECT_EQ(n.run(n.node("Mul", {big, big})).i, (std::vector<int64_t>{0}));  // 2^32 mod 2^32
}

TEST(Elementwise, IntegerDivTruncatesTowardZero) {
  Net n(14);
  int a = n.input("a", DType::i32, {4}, {7, -7, 7, -7});
  int b = n.input("b", DType::i32, {4}, {2, 2, -2, -2});
  EXPECT_EQ(n.run(n.node("Div", {a, b})).i, (std::vector<int64_t>{3, -3, -3, 3}));
  int z = n.input("z", DType::i32, {4}, {1, 1, 0, 1});
  std::string msg = error_of([&] { n.run(n.node("Div", {a, z})); });
  EXPECT_NE(msg.find("division by zero"), std::string::npos) << msg;
}

// Mod: Python's % by default (the divisor's sign, a zero of the divisor's sign), C's fmod with
// fmod = 1 (the dividend's sign); integer MIN % -1 is 0; a zero divisor is an error.
TEST(Elementwise, ModTakesTheSignFmodSays) {
  Net n(13);
  int a = n.input("a", DType::i32, {5}, {7, -7, 7, -7, -2147483648.0});
  int b = n.input("b", DType::i32, {5}, {3, 3, -3, -3, -1});
  EXPECT_EQ(n.run(n.node("Mod", {a, b})).i, (std::vector<int64_t>{1, 2, -2, -1, 0}));
  EXPECT_EQ(n.run(n.node("Mod", {a, b}, {{"fmod", integer(1)}})).i, (std::vector<int64_t>{1, -1, 1, -1, 0}));
  int x = n.input("x", DType::f32, {5}, {5.5, -5.5, 6, -6, 1e-10});
  int y = n.input("y", DType::f32, {5}, {2, 2, -3, 3, -1});
  RefTensor py = n.run(n.node("Mod", {x, y}));
  EXPECT_EQ(py.f[0], 1.5);
  EXPECT_EQ(py.f[1], 0.5);
  EXPECT_TRUE(py.f[2] == 0 && std::signbit(py.f[2]));  // -0: the divisor's sign
  EXPECT_TRUE(py.f[3] == 0 && !std::signbit(py.f[3]));
  EXPECT_EQ(py.f[4], static_cast<double>(1e-10f) - 1);  // moved to the divisor's sign
  RefTensor c = n.run(n.node("Mod", {x, y}, {{"fmod", integer(1)}}));
  EXPECT_EQ(c.f[1], -1.5);
  EXPECT_TRUE(c.f[3] == 0 && std::signbit(c.f[3]));  // -0: the dividend's sign
  int z = n.input("z", DType::i32, {5}, {1, 1, 0, 1, 1});
  EXPECT_NE(error_of([&] { n.run(n.node("Mod", {a, z})); }).find("modulo by zero"), std::string::npos);
  EXPECT_NE(error_of([&] {
              n.infer(n.node("Mod", {a, b}, {{"fmod", integer(2)}}));
            }).find("'fmod' must be 0 or 1"),
            std::string::npos);
}

// Bitwise ops see two's-complement bits of the dtype; shifts by the width or more give 0.
TEST(Elementwise, BitwiseOpsAndShiftsWorkOnTheDtypesBits) {
  Net n(18);
  int a = n.input("a", DType::i8, {3}, {-128, 0x55, -1});
  int b = n.input("b", DType::i8, {3}, {127, 0x0f, 1});
  EXPECT_EQ(n.run(n.node("BitwiseAnd", {a, b})).i, (std::vector<int64_t>{0, 5, 1}));
  EXPECT_EQ(n.run(n.node("BitwiseOr", {a, b})).i, (std::vector<int64_t>{-1, 0x5f, -1}));
  EXPECT_EQ(n.run(n.node("BitwiseXor", {a, b})).i, (std::vector<int64_t>{-1, 0x5a, -2}));
  EXPECT_EQ(n.run(n.node("BitwiseNot", {a})).i, (std::vector<int64_t>{127, -0x56, 0}));
  int x = n.input("x", DType::u8, {4}, {255, 1, 128, 7});
  int y = n.input("y", DType::u8, {4}, {1, 7, 8, 200});
  EXPECT_EQ(n.run(n.node("BitwiseNot", {x})).i, (std::vector<int64_t>{0, 254, 127, 248}));
  auto shift = [&](const char* dir) { return n.node("BitShift", {x, y}, {{"direction", string_attr(dir)}}); };
  EXPECT_EQ(n.run(shift("LEFT")).i, (std::vector<int64_t>{254, 128, 0, 0}));
  EXPECT_EQ(n.run(shift("RIGHT")).i, (std::vector<int64_t>{127, 0, 0, 0}));
  EXPECT_NE(error_of([&] { n.infer(shift("UP")); }).find("'direction' must be"), std::string::npos);
}

// Opset 28's signed shifts: left wraps, right is arithmetic; past the width (or negative) the
// result is 0, or -1 for a negative value shifted right.
TEST(Elementwise, SignedBitShiftFromOpset28) {
  Net n(28);
  int a = n.input("a", DType::i8, {5}, {-8, 64, -1, -128, 5});
  int b = n.input("b", DType::i8, {5}, {1, 1, 8, -1, 2});
  auto shift = [&](const char* dir) { return n.node("BitShift", {a, b}, {{"direction", string_attr(dir)}}); };
  EXPECT_EQ(n.run(shift("LEFT")).i, (std::vector<int64_t>{-16, -128, 0, 0, 20}));
  EXPECT_EQ(n.run(shift("RIGHT")).i, (std::vector<int64_t>{-4, 32, -1, -1, 1}));
}

// Round halves to even and keeps -0; IsNaN, IsInf (either sign as asked) answer bool.
TEST(Elementwise, RoundIsNanIsInf) {
  Net n(20);
  double inf = INFINITY;
  int x = n.input("x", DType::f32, {7}, {0.5, 1.5, 2.5, -0.4, -2.5, NAN, -inf});
  RefTensor r = n.run(n.node("Round", {x}));
  EXPECT_EQ(r.f[0], 0);
  EXPECT_EQ(r.f[1], 2);
  EXPECT_EQ(r.f[2], 2);
  EXPECT_TRUE(r.f[3] == 0 && std::signbit(r.f[3]));
  EXPECT_EQ(r.f[4], -2);
  EXPECT_TRUE(std::isnan(r.f[5]));
  EXPECT_EQ(n.run(n.node("IsNaN", {x})).i, (std::vector<int64_t>{0, 0, 0, 0, 0, 1, 0}));
  int y = n.input("y", DType::f32, {3}, {inf, -inf, 1});
  EXPECT_EQ(n.run(n.node("IsInf", {y})).i, (std::vector<int64_t>{1, 1, 0}));
  EXPECT_EQ(n.run(n.node("IsInf", {y}, {{"detect_negative", integer(0)}})).i, (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(n.run(n.node("IsInf", {y}, {{"detect_positive", integer(0)}})).i, (std::vector<int64_t>{0, 1, 0}));
}

TEST(Elementwise, ShrinkSwishAndEyeLike) {
  Net n(24);
  int x = n.input("x", DType::f64, {5}, {-2, -0.5, 0.25, 1, NAN});
  RefTensor s = n.run(n.node("Shrink", {x}, {{"lambd", real(0.5)}, {"bias", real(0.25)}}));
  EXPECT_EQ(s.f, (std::vector<double>{-1.75, 0, 0, 0.75, 0}));  // NaN gives 0, as ONNX's where does
  RefTensor w = n.run(n.node("Swish", {x}, {{"alpha", real(2)}}));
  EXPECT_DOUBLE_EQ(w.f[0], -2 / (1 + std::exp(4.0)));
  EXPECT_DOUBLE_EQ(w.f[3], 1 / (1 + std::exp(-2.0)));
  int m = n.input("m", DType::i32, {2, 3});
  RefTensor e = n.run(n.node("EyeLike", {m}, {{"k", integer(1)}, {"dtype", integer(1)}}));  // float32
  EXPECT_EQ(e.dtype, DType::f32);
  EXPECT_EQ(e.f, (std::vector<double>{0, 1, 0, 0, 0, 1}));
}

TEST(Elementwise, BitwiseOpsRefuseOtherDtypes) {
  Net n(18);
  int a = n.input("a", DType::i8, {1}), b = n.input("b", DType::i8, {1});
  EXPECT_NE(error_of([&] {
              n.infer(n.node("BitShift", {a, b}, {{"direction", string_attr("LEFT")}}));
            }).find("int8"),
            std::string::npos);
  Net m(18);
  int f = m.input("f", DType::f32, {1}), g = m.input("g", DType::f32, {1});
  EXPECT_NE(error_of([&] { m.infer(m.node("BitwiseAnd", {f, g})); }).find("float32"), std::string::npos);
}

TEST(Elementwise, Uint64ComparesUnsigned) {
  Net n(14);
  int a = n.input("a", DType::u64, {1});
  int b = n.input("b", DType::u64, {1}, {1});
  RefTensor big(DType::u64, {1});
  big.i[0] = std::numeric_limits<int64_t>::min();  // bit pattern of 2^63
  n.feed["a"] = from_ref(big);
  EXPECT_EQ(n.run(n.node("Greater", {a, b})).i, (std::vector<int64_t>{1}));
  EXPECT_EQ(n.run(n.node("Less", {a, b})).i, (std::vector<int64_t>{0}));
}

TEST(Elementwise, PowKeepsTheBaseDtype) {
  Net n(15);
  int base = n.input("base", DType::i32, {5}, {3, 2, -1, 1, -2});
  int e = n.input("e", DType::i64, {5}, {4, -1, -3, -5, 3});
  RefTensor r = n.run(n.node("Pow", {base, e}));
  EXPECT_EQ(r.dtype, DType::i32);
  EXPECT_EQ(r.i, (std::vector<int64_t>{81, 0, -1, 1, -8}));  // 2^-1 = 0.5 truncates to 0
  int x = n.input("x", DType::f32, {2}, {2, 9});
  int h = n.input("h", DType::f32, {2}, {0.5, 0.5});
  int k = n.input("k", DType::i64, {2}, {10, 2});
  EXPECT_EQ(n.run(n.node("Pow", {x, k})).f, (std::vector<double>{1024, 81}));
  RefTensor ib = n.run(n.node("Pow", {base, n.input("half", DType::f32, {1}, {0.5})}));
  EXPECT_EQ(ib.i[0], 1);  // sqrt(3) = 1.73 truncates to 1
  EXPECT_NEAR(n.run(n.node("Pow", {x, h})).f[1], 3.0, 1e-15);
}

TEST(Elementwise, CastRoundsTruncatesAndWraps) {
  Net n(13);
  int f = n.input("f", DType::f64, {5}, {0.1, -2.7, 2.7, NAN, 0.0});
  RefTensor h = n.run(n.node("Cast", {f}, {{"to", integer(10)}}));  // float16
  EXPECT_EQ(h.f[0], 0.0999755859375);  // nearest half to 0.1: 1638 * 2^-14
  RefTensor i = n.run(n.node("Cast", {f}, {{"to", integer(6)}}));  // int32 (NaN: undefined)
  EXPECT_EQ(i.i[1], -2);
  EXPECT_EQ(i.i[2], 2);
  RefTensor b = n.run(n.node("Cast", {f}, {{"to", integer(9)}}));  // bool
  EXPECT_EQ(b.i, (std::vector<int64_t>{1, 1, 1, 1, 0}));
  int w = n.input("w", DType::i32, {3}, {300, -1, 16777217});
  EXPECT_EQ(n.run(n.node("Cast", {w}, {{"to", integer(2)}})).i, (std::vector<int64_t>{44, 255, 1}));
  EXPECT_EQ(n.run(n.node("Cast", {w}, {{"to", integer(1)}})).f[2], 16777216.0);  // float32 spacing 2
}

TEST(Elementwise, CastTargetsOutsideLockstep) {
  Net n(19);
  int x = n.input("x", DType::f32, {2});
  int y8 = n.node("Cast", {x}, {{"to", integer(17)}});  // float8e4m3fn
  EXPECT_THROW(n.infer(y8), Unsupported);
  Net m(19);
  int bad = m.node("Cast", {m.input("x", DType::f32, {2})}, {{"to", integer(99)}});
  std::string msg = error_of([&] { m.infer(bad); });
  EXPECT_NE(msg.find("the_Cast"), std::string::npos) << msg;
  EXPECT_NE(msg.find("99"), std::string::npos) << msg;
}

TEST(Elementwise, ClipBoundsAttributesThenInputs) {
  Net old(7);
  int x = old.input("x", DType::f32, {4}, {-3, -0.5, 0.5, 3});
  RefTensor r = old.run(old.node("Clip", {x}, {{"min", real(-1)}, {"max", real(1)}}));
  EXPECT_EQ(r.f, (std::vector<double>{-1, -0.5, 0.5, 1}));
  int lo = old.input("lo", DType::f32, {}, {-1});
  EXPECT_NE(error_of([&] { old.infer(old.node("Clip", {x, lo})); }).find("opset 11"), std::string::npos);

  Net n(13);
  int xi = n.input("xi", DType::i8, {4}, {-128, -5, 5, 127});
  int hi = n.input("hi", DType::i8, {}, {6});
  // Omitted min keeps the dtype's lowest value.
  EXPECT_EQ(n.run(n.node("Clip", {xi, -1, hi})).i, (std::vector<int64_t>{-128, -5, 5, 6}));
}

TEST(Elementwise, DtypeMismatchNamesNodeAndBothDtypes) {
  Net n(14);
  int y = n.node("Add", {n.input("a", DType::f32, {2}), n.input("b", DType::i64, {2})});
  std::string msg = error_of([&] { n.infer(y); });
  EXPECT_NE(msg.find("node 'the_Add' (Add)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("float32"), std::string::npos) << msg;
  EXPECT_NE(msg.find("int64"), std::string::npos) << msg;
}

TEST(Elementwise, IncompatibleBroadcastNamesNodeAndShapes) {
  Net n(14);
  int y = n.node("Mul", {n.input("a", DType::f32, {2, 3}), n.input("b", DType::f32, {4})});
  std::string msg = error_of([&] { n.infer(y); });
  EXPECT_NE(msg.find("node 'the_Mul' (Mul)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[2,3]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[4]"), std::string::npos) << msg;
}

TEST(Elementwise, DtypesFollowTheOpset) {
  // uint8 Add arrived at opset 14; Where at opset 9; Shape's start at 15.
  Net n13(13);
  int y = n13.node("Add", {n13.input("a", DType::u8, {2}), n13.input("b", DType::u8, {2})});
  std::string msg = error_of([&] { n13.infer(y); });
  EXPECT_NE(msg.find("uint8"), std::string::npos) << msg;
  EXPECT_NE(msg.find("opset 13"), std::string::npos) << msg;
  Net n14(14);
  int ok = n14.node("Add", {n14.input("a", DType::u8, {2}), n14.input("b", DType::u8, {2})});
  EXPECT_EQ(n14.infer(ok).type[ok].dtype, DType::u8);
  Net n8(8);
  int c = n8.input("c", DType::boolean, {2});
  int w = n8.node("Where", {c, n8.input("x", DType::f32, {2}), n8.input("z", DType::f32, {2})});
  EXPECT_NE(error_of([&] { n8.infer(w); }).find("opset 9"), std::string::npos);
  Net s13(13);
  int sh = s13.node("Shape", {s13.input("x", DType::f32, {2})}, {{"start", integer(1)}});
  EXPECT_NE(error_of([&] { s13.infer(sh); }).find("opset 15"), std::string::npos);
}

// What changed at opsets 27 and 28 for ops lockstep has: Range's stash_type (float16 and
// bfloat16 counted in float32) and Celu's dtypes (float32 only before 28).
TEST(Elementwise, Opsets27And28) {
  Net c27(27);
  int y = c27.node("Celu", {c27.input("x", DType::f64, {2})});
  EXPECT_NE(error_of([&] { c27.infer(y); }).find("float64"), std::string::npos);
  Net c28(28);
  int x = c28.input("x", DType::f64, {2}, {-1, 2});
  RefTensor r = c28.run(c28.node("Celu", {x}, {{"alpha", real(2)}}));
  EXPECT_EQ(r.f[0], 2 * std::expm1(-0.5));
  EXPECT_EQ(r.f[1], 2);
  Net r26(26);
  int s = r26.input("s", DType::f32, {}, {0});
  int stash = r26.node("Range", {s, s, s}, {{"stash_type", integer(1)}});
  EXPECT_NE(error_of([&] { r26.infer(stash); }).find("opset 27"), std::string::npos);
  Net r27(27);
  int hs = r27.input("s", DType::f16, {}, {1});
  int hl = r27.input("l", DType::f16, {}, {3});
  int hd = r27.input("d", DType::f16, {}, {0.5});
  RefTensor h = r27.run(r27.node("Range", {hs, hl, hd}));
  EXPECT_EQ(h.dtype, DType::f16);
  EXPECT_EQ(h.f, (std::vector<double>{1, 1.5, 2, 2.5}));
  int other = r27.node("Range", {hs, hl, hd}, {{"stash_type", integer(10)}});
  EXPECT_NE(error_of([&] { r27.infer(other); }).find("stash_type"), std::string::npos);
}

TEST(Generator, ShapeFoldsThroughCast) {
  // Shape of a [2,-1,5] input: the whole shape is unknown, Shape(start=2) is not.
  Net n(15);
  int x = n.input("x", DType::f32, {2, 3, 5});
  int s = n.node("Shape", {x});
  int c = n.node("Cast", {s}, {{"to", integer(1)}});
  GraphTypes t = n.infer(c);
  ASSERT_TRUE(t.value[c].has_value());
  EXPECT_EQ(t.value[c]->dtype, DType::f32);
  EXPECT_EQ(t.value[c]->f, (std::vector<double>{2, 3, 5}));

  Net m(15);
  int sym = m.input("x", DType::f32, {2, -1, 5});
  int whole = m.node("Shape", {sym});
  int tail = m.node("Shape", {sym}, {{"start", integer(-1)}});
  GraphTypes u = m.infer(tail);
  EXPECT_FALSE(u.value[whole].has_value());
  EXPECT_EQ(u.type[whole].dims, (Shape{3}));
  ASSERT_TRUE(u.value[tail].has_value());
  EXPECT_EQ(u.value[tail]->i, (std::vector<int64_t>{5}));
}

TEST(Generator, ConstantOfShapeTakesItsShapeFromAConstant) {
  Net n(12);
  int dims = n.node("Constant", {}, {{"value_ints", ints({2, 3})}});
  int y = n.node("ConstantOfShape", {dims});
  GraphTypes t = n.infer(y);
  EXPECT_EQ(t.type[y].dtype, DType::f32);  // default fill: float32 0
  EXPECT_EQ(t.type[y].dims, (Shape{2, 3}));
  RefTensor r = n.run(y);
  EXPECT_EQ(r.f, std::vector<double>(6, 0.0));
}

TEST(Generator, RangeLengthIsCeilOfSpanOverDelta) {
  Net n(11);
  int s = n.input("s", DType::i32, {}, {10});
  int l = n.input("l", DType::i32, {}, {4});
  int d = n.input("d", DType::i32, {}, {-3});
  EXPECT_EQ(n.run(n.node("Range", {s, l, d})).i, (std::vector<int64_t>{10, 7}));  // ceil(-6/-3)=2
  int fs = n.input("fs", DType::f64, {}, {1});
  int fl = n.input("fl", DType::f64, {}, {2});
  int fd = n.input("fd", DType::f64, {}, {0.3});
  RefTensor r = n.run(n.node("Range", {fs, fl, fd}));  // ceil(1/0.3) = 4
  ASSERT_EQ(r.shape, (Shape{4}));
  EXPECT_NEAR(r.f[3], 1.9, 1e-15);
  int empty = n.node("Range", {l, s, d});  // 4 -> 10 with step -3: nothing
  EXPECT_EQ(n.run(empty).shape, (Shape{0}));
}

TEST(Generator, DataDependentSizesAreGuarded) {
  // Sizes only known at run time must fail cleanly, not try to allocate 10^15 elements.
  Net n(11);
  int s = n.input("s", DType::f64, {}, {0});
  int l = n.input("l", DType::f64, {}, {1e15});
  int d = n.input("d", DType::f64, {}, {1});
  std::string msg = error_of([&] { n.run(n.node("Range", {s, l, d})); });
  EXPECT_NE(msg.find("too large"), std::string::npos) << msg;
  Net m(11);
  int dims = m.input("dims", DType::i64, {2}, {1e8, 1e8});
  msg = error_of([&] { m.run(m.node("ConstantOfShape", {dims})); });
  EXPECT_NE(msg.find("too large"), std::string::npos) << msg;
}

}  // namespace
}  // namespace lockstep
