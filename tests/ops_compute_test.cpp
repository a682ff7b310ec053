// Conv, ConvTranspose, MatMul, Gemm, ReduceSum/Mean and Softmax on the reference interpreter,
// checked against hand-computed values and naive direct formulas written here.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "core/error.h"
#include "ops/infer.h"
#include "ref/interpreter.h"

namespace lockstep {
namespace {

// One-node graphs: inputs "x0", "x1", ... fed at run time (f64), optional initializers.
struct OneNode {
  Graph g;
  TensorMap feed;

  explicit OneNode(int opset) { g.opset = opset; }
  int input(const std::string& name, Shape shape, std::vector<double> data) {
    int v = g.add_value(name, TypeInfo{DType::f64, true, shape});
    for (int64_t d : shape) g.values[v].declared.push_back(Dim{d, ""});
    g.inputs.push_back(v);
    Tensor t(DType::f64, shape);
    std::copy(data.begin(), data.end(), t.data<double>());
    feed[name] = t;
    return v;
  }
  int initializer(const std::string& name, DType dt, Shape shape, std::vector<int64_t> data) {
    int v = g.add_value(name, TypeInfo{dt, true, shape});
    RefTensor r(dt, shape);
    for (size_t k = 0; k < data.size(); ++k) r.set_int(k, data[k]);
    g.values[v].initializer = std::make_shared<const Tensor>(from_ref(r));
    return v;
  }
  void node(const std::string& op, const std::vector<int>& ins, std::map<std::string, Attr> attrs) {
    Node n{"the_" + op, op, "", ins, {}, std::move(attrs), "the_" + op};  // id: how messages name it
    int out = g.add_value("y");
    g.values[out].producer = 0;
    n.outputs.push_back(out);
    g.nodes.push_back(n);
    g.outputs.push_back(out);
  }
  RefTensor run() { return run_reference(g, feed).at(0); }
  TypeInfo infer() { return infer_graph(g).type[g.outputs[0]]; }
};

Attr ints(std::vector<int64_t> v) { Attr a; a.kind = Attr::Ints; a.ints = std::move(v); return a; }
Attr integer(int64_t v) { Attr a; a.kind = Attr::Int; a.i = v; return a; }
Attr str(std::string s) { Attr a; a.kind = Attr::String; a.s = std::move(s); return a; }
Attr real(double v) { Attr a; a.kind = Attr::Float; a.f = v; return a; }

std::vector<double> iota(int64_t n, double scale, double offset = 0) {
  std::vector<double> v(n);
  for (int64_t k = 0; k < n; ++k) v[k] = offset + scale * static_cast<double>((k * 7) % 11 - 5);
  return v;
}

void expect_near_all(const RefTensor& got, const std::vector<double>& want) {
  ASSERT_EQ(got.f.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(got.f[k], want[k], 1e-12) << "at " << k;
}

TEST(Conv, OneDimHandValues) {
  // x = [1 2 3 4], w = [1 0 -1], dilation 2, pads [2, 1]: padded x = [0 0 1 2 3 4 0];
  // y[t] = xp[t] - xp[t+4]  ->  [0-3, 0-4, 1-0] = [-3, -4, 1].
  OneNode n(17);
  int x = n.input("x", {1, 1, 4}, {1, 2, 3, 4});
  int w = n.input("w", {1, 1, 3}, {1, 0, -1});
  n.node("Conv", {x, w}, {{"dilations", ints({2})}, {"pads", ints({2, 1})}});
  RefTensor y = n.run();
  EXPECT_EQ(y.shape, (Shape{1, 1, 3}));
  expect_near_all(y, {-3, -4, 1});
}

// Groups of 5 input channels: one full block of 4 and a single channel. Long rows (L > 256)
// are computed in several tiles along time.
void check_conv_1d(int64_t S, int64_t L) {
  const int64_t N = 2, C = 10, G = 2, M = 6, K = 3, D = 2, P0 = 3, P1 = 1;
  const int64_t Cg = C / G, Mg = M / G, Lout = (L + P0 + P1 - ((K - 1) * D + 1)) / S + 1;
  auto xd = iota(N * C * L, 0.5), wd = iota(M * Cg * K, 0.25, 0.1), bd = iota(M, 1.0);
  OneNode n(11);
  int x = n.input("x", {N, C, L}, xd), w = n.input("w", {M, Cg, K}, wd), b = n.input("b", {M}, bd);
  n.node("Conv", {x, w, b},
         {{"dilations", ints({D})}, {"pads", ints({P0, P1})}, {"strides", ints({S})}, {"group", integer(G)}});
  RefTensor y = n.run();
  ASSERT_EQ(y.shape, (Shape{N, M, Lout}));
  std::vector<double> want;  // direct definition, one output element at a time
  for (int64_t b0 = 0; b0 < N; ++b0)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t t = 0; t < Lout; ++t) {
        double acc = bd[m];
        for (int64_t c = 0; c < Cg; ++c)
          for (int64_t k = 0; k < K; ++k) {
            int64_t i = t * S + k * D - P0;
            if (i >= 0 && i < L) acc += wd[(m * Cg + c) * K + k] * xd[(b0 * C + (m / Mg) * Cg + c) * L + i];
          }
        want.push_back(acc);
      }
  expect_near_all(y, want);
}

TEST(Conv, OneDimGroupDilationPaddingBias) {
  check_conv_1d(1, 9);
  check_conv_1d(2, 9);
  check_conv_1d(1, 700);
  check_conv_1d(3, 1000);
}

TEST(Conv, TwoDimStridedDilatedAgainstDirectSum) {
  // 5 input channels: one full block of 4 plus a single one; strides and dilations differ per axis.
  const int64_t C = 5, M = 3, H = 7, W = 8, KH = 2, KW = 3, SH = 2, SW = 3, DH = 3, DW = 1;
  const int64_t PT = 1, PL = 2, PB = 0, PR = 1;
  const int64_t OH = (H + PT + PB - ((KH - 1) * DH + 1)) / SH + 1, OW = (W + PL + PR - ((KW - 1) * DW + 1)) / SW + 1;
  auto xd = iota(C * H * W, 0.5), wd = iota(M * C * KH * KW, 0.25, 0.1);
  OneNode n(17);
  int x = n.input("x", {1, C, H, W}, xd), w = n.input("w", {M, C, KH, KW}, wd);
  n.node("Conv", {x, w}, {{"strides", ints({SH, SW})}, {"dilations", ints({DH, DW})}, {"pads", ints({PT, PL, PB, PR})}});
  RefTensor y = n.run();
  ASSERT_EQ(y.shape, (Shape{1, M, OH, OW}));
  std::vector<double> want;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double acc = 0;
        for (int64_t c = 0; c < C; ++c)
          for (int64_t kh = 0; kh < KH; ++kh)
            for (int64_t kw = 0; kw < KW; ++kw) {
              int64_t ih = oh * SH + kh * DH - PT, iw = ow * SW + kw * DW - PL;
              if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                acc += wd[((m * C + c) * KH + kh) * KW + kw] * xd[(c * H + ih) * W + iw];
            }
        want.push_back(acc);
      }
  expect_near_all(y, want);
}

TEST(Conv, TwoDimSameLowerPutsOddPaddingFirst) {
  // 2x2 input, 2x2 ones kernel, SAME_LOWER: total pad 1 per axis, all of it before.
  // y[i][j] = sum of x over rows i-1..i, cols j-1..j (out of range = 0).
  OneNode n(17);
  int x = n.input("x", {1, 1, 2, 2}, {1, 2, 3, 4});
  int w = n.input("w", {1, 1, 2, 2}, {1, 1, 1, 1});
  n.node("Conv", {x, w}, {{"auto_pad", str("SAME_LOWER")}});
  expect_near_all(n.run(), {1, 3, 4, 10});
}

void check_hifigan_upsample(int64_t L) {
  const int64_t C = 6, M = 2, S = 8, K = 16, P = 4, Lout = (L - 1) * S - 2 * P + K;
  std::vector<double> xd = iota(C * L, 0.5), wd = iota(C * M * K, 0.125, 0.05), bd = {0.5, -1.0};
  OneNode n(17);
  int x = n.input("x", {1, C, L}, xd), w = n.input("w", {C, M, K}, wd), b = n.input("b", {M}, bd);
  n.node("ConvTranspose", {x, w, b}, {{"strides", ints({S})}, {"pads", ints({P, P})}});
  RefTensor y = n.run();
  ASSERT_EQ(y.shape, (Shape{1, M, Lout}));
  std::vector<double> want(M * Lout);  // scatter definition: x[c,i] lands on o = i*S + k - P
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t o = 0; o < Lout; ++o) want[m * Lout + o] = bd[m];
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < L; ++i)
        for (int64_t k = 0; k < K; ++k) {
          int64_t o = i * S + k - P;
          if (o >= 0 && o < Lout) want[m * Lout + o] += xd[c * L + i] * wd[(c * M + m) * K + k];
        }
  }
  expect_near_all(y, want);
}

TEST(ConvTranspose, HifiGanUpsampleShapeAndValues) {
  check_hifigan_upsample(5);    // output (5 - 1) * 8 - 2 * 4 + 16 = 40
  check_hifigan_upsample(300);  // several time tiles
}

TEST(ConvTranspose, GroupOutputPaddingAndOutputShape) {
  // x = [[1 2], [3 4]] two groups, w ones kernel 2, stride 2: each channel doubles its
  // samples; output_padding 1 appends a zero; output_shape 5 does the same through pads.
  for (bool by_shape : {false, true}) {
    OneNode n(17);
    int x = n.input("x", {1, 2, 2}, {1, 2, 3, 4});
    int w = n.input("w", {2, 1, 2}, {1, 1, 1, 1});
    std::map<std::string, Attr> at = {{"strides", ints({2})}, {"group", integer(2)}};
    if (by_shape) at["output_shape"] = ints({5});
    else at["output_padding"] = ints({1});
    n.node("ConvTranspose", {x, w}, at);
    RefTensor y = n.run();
    ASSERT_EQ(y.shape, (Shape{1, 2, 5}));
    expect_near_all(y, {1, 1, 2, 2, 0, 3, 3, 4, 4, 0});
  }
}

void expect_error_naming(OneNode& n, const std::string& part) {
  try {
    n.infer();
    FAIL() << "no error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("node 'the_"), std::string::npos) << msg;
    EXPECT_NE(msg.find(part), std::string::npos) << msg;
  }
}

TEST(ShapeRule, ConvChannelMismatchNamesTheNode) {
  OneNode n(17);
  int x = n.input("x", {1, 6, 10}, std::vector<double>(60));
  int w = n.input("w", {4, 2, 3}, std::vector<double>(24));  // group 2 expects 4 channels
  n.node("Conv", {x, w}, {{"group", integer(2)}});
  expect_error_naming(n, "6 channels");
}

TEST(ShapeRule, ConvTransposeChannelAndBiasMismatch) {
  OneNode a(17);
  int x = a.input("x", {1, 5, 10}, std::vector<double>(50));
  int w = a.input("w", {4, 2, 3}, std::vector<double>(24));
  a.node("ConvTranspose", {x, w}, {});
  expect_error_naming(a, "5 channels");
  OneNode b(17);
  x = b.input("x", {1, 4, 10}, std::vector<double>(40));
  w = b.input("w", {4, 2, 3}, std::vector<double>(24));
  int bias = b.input("b", {3}, std::vector<double>(3));
  b.node("ConvTranspose", {x, w, bias}, {{"group", integer(2)}});  // 2*2 = 4 output channels
  expect_error_naming(b, "bias B has 3 values");
}

TEST(ShapeRule, MatMulAndGemmInnerDims) {
  OneNode a(13);
  int x = a.input("a", {2, 3}, std::vector<double>(6)), y = a.input("b", {4, 2}, std::vector<double>(8));
  a.node("MatMul", {x, y}, {});
  expect_error_naming(a, "inner dimensions");
  OneNode b(13);
  x = b.input("a", {2, 3}, std::vector<double>(6)), y = b.input("b", {4, 2}, std::vector<double>(8));
  b.node("Gemm", {x, y}, {{"transB", integer(1)}});  // B^T is [2,4]: K 3 vs 2
  expect_error_naming(b, "inner dimensions");
}

// Found by the loader fuzzer under UBSan: a zero dim meant indexing an empty vector.
TEST(MatMul, ZeroSizedDimGivesAnEmptyProduct) {
  OneNode a(13);  // [1,3,4] x [1,64,4,0] -> [1,64,3,0]
  int x = a.input("a", {1, 3, 4}, std::vector<double>(12, 1.0)), y = a.input("b", {1, 64, 4, 0}, {});
  a.node("MatMul", {x, y}, {});
  RefTensor r = a.run();
  EXPECT_EQ(r.shape, (Shape{1, 64, 3, 0}));
  EXPECT_EQ(r.numel(), 0);
}

// Found by the loader fuzzer: an omitted required input (empty name) read value -1.
TEST(ShapeRule, OmittedRequiredInputIsAnError) {
  OneNode a(13);
  int x = a.input("a", {2, 2}, std::vector<double>(4));
  a.node("Gemm", {x, -1}, {});
  expect_error_naming(a, "required input 1 is omitted");
}

TEST(MatMul, OneDimOperandsAndBatchBroadcast) {
  OneNode a(13);  // [2] . [2,3] -> [3]
  int x = a.input("a", {2}, {1, 2}), y = a.input("b", {2, 3}, {1, 2, 3, 4, 5, 6});
  a.node("MatMul", {x, y}, {});
  RefTensor r = a.run();
  EXPECT_EQ(r.shape, (Shape{3}));
  expect_near_all(r, {9, 12, 15});
  OneNode b(13);  // [2,1,2,2] x [3,2,1] -> [2,3,2,1]
  x = b.input("a", {2, 1, 2, 2}, {1, 0, 0, 1, 2, 0, 0, 2});
  y = b.input("b", {3, 2, 1}, {1, 2, 3, 4, 5, 6});
  b.node("MatMul", {x, y}, {});
  r = b.run();
  EXPECT_EQ(r.shape, (Shape{2, 3, 2, 1}));
  expect_near_all(r, {1, 2, 3, 4, 5, 6, 2, 4, 6, 8, 10, 12});
}

TEST(MatMul, IntegersWrapLikeTheirDtype) {
  OneNode n(13);
  int a = n.initializer("a", DType::i32, {1, 2}, {int64_t{1} << 30, 3});
  int b = n.initializer("b", DType::i32, {2, 1}, {4, 5});
  n.node("MatMul", {a, b}, {});
  RefTensor r = n.run();
  ASSERT_EQ(r.dtype, DType::i32);
  EXPECT_EQ(r.i.at(0), 15);  // 2^32 wraps to 0 in int32
}

TEST(Gemm, AlphaBetaTransposeAndRowBias) {
  // A^T = [[1,2],[3,4]], B = I, C = [10, 20] repeats down the rows: 2*A^T + 0.5*C.
  OneNode n(13);
  int a = n.input("a", {2, 2}, {1, 3, 2, 4}), b = n.input("b", {2, 2}, {1, 0, 0, 1});
  int c = n.input("c", {2}, {10, 20});
  n.node("Gemm", {a, b, c}, {{"transA", integer(1)}, {"alpha", real(2)}, {"beta", real(0.5)}});
  expect_near_all(n.run(), {7, 14, 11, 18});
}

TEST(Reduce, MeanOverAxesAndEmptyAxesNoop) {
  OneNode a(18);  // axes input [0, 2] of [2,2,2], keepdims 0
  int x = a.input("x", {2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), ax = a.initializer("axes", DType::i64, {2}, {0, -1});
  a.node("ReduceMean", {x, ax}, {{"keepdims", integer(0)}});
  RefTensor r = a.run();
  EXPECT_EQ(r.shape, (Shape{2}));
  expect_near_all(r, {(1 + 2 + 5 + 6) / 4.0, (3 + 4 + 7 + 8) / 4.0});
  OneNode b(13);  // ReduceSum, no axes, noop_with_empty_axes: identity
  x = b.input("x", {3}, {1, 2, 3});
  b.node("ReduceSum", {x}, {{"noop_with_empty_axes", integer(1)}});
  expect_near_all(b.run(), {1, 2, 3});
  OneNode c(11);  // ReduceSum opset 11: axes attribute; default keepdims
  x = c.input("x", {2, 3}, {1, 2, 3, 4, 5, 6});
  c.node("ReduceSum", {x}, {{"axes", ints({1})}});
  r = c.run();
  EXPECT_EQ(r.shape, (Shape{2, 1}));
  expect_near_all(r, {6, 15});
}

TEST(Softmax, Opset11CoercesTo2DOpset13UsesOneAxis) {
  std::vector<double> xs = {0, std::log(3.0), 0, std::log(3.0)};  // [1,2,2]
  OneNode a(11);  // axis 1 flattens [2,2] into one row of 4: weights 1,3,1,3 over 8
  a.node("Softmax", {a.input("x", {1, 2, 2}, xs)}, {{"axis", integer(1)}});
  expect_near_all(a.run(), {0.125, 0.375, 0.125, 0.375});
  OneNode b(13);  // axis 1 alone: pairs (x[0],x[2]) and (x[1],x[3]) are equal -> 0.5 each
  b.node("Softmax", {b.input("x", {1, 2, 2}, xs)}, {{"axis", integer(1)}});
  expect_near_all(b.run(), {0.5, 0.5, 0.5, 0.5});
  OneNode c(13);  // large values: max subtraction keeps exp finite
  c.node("Softmax", {c.input("x", {2}, {1000, 1000 + std::log(3.0)})}, {});
  expect_near_all(c.run(), {0.25, 0.75});
}

// Rows of [axis, rank): x / sqrt(mean(x^2) + eps) * scale, the scale broadcast to the row.
TEST(RMSNormalization, RowsOfTheTrailingDimsScaled) {
  OneNode n(23);
  int x = n.input("x", {2, 2}, {3, 4, 1, -1});
  int scale = n.input("scale", {2}, {1, 2});
  n.node("RMSNormalization", {x, scale}, {{"epsilon", real(0.5)}});
  double r0 = std::sqrt((9.0 + 16) / 2 + 0.5), r1 = std::sqrt(1.0 + 0.5);
  expect_near_all(n.run(), {3 / r0, 8 / r0, 1 / r1, -2 / r1});
  OneNode m(23);  // axis 0: one row of all four
  int y = m.input("x", {2, 2}, {3, 4, 1, -1});
  int s1 = m.input("scale", {1}, {1});
  m.node("RMSNormalization", {y, s1}, {{"axis", integer(0)}, {"epsilon", real(0)}});
  double r = std::sqrt((9.0 + 16 + 1 + 1) / 4);
  expect_near_all(m.run(), {3 / r, 4 / r, 1 / r, -1 / r});
  OneNode old(22);
  old.node("RMSNormalization", {old.input("x", {1}, {1}), old.input("s", {1}, {1})}, {});
  EXPECT_THROW(old.infer(), Error);
}

TEST(LpNormalization, RowsDividedByTheirNorm) {
  auto run = [](int64_t p) {
    OneNode n(17);
    int x = n.input("x", {2, 3}, {3, -4, 0, 0, 2, 0});
    n.node("LpNormalization", {x}, {{"axis", integer(0)}, {"p", integer(p)}});
    return n.run();
  };
  expect_near_all(run(1), {1, -4.0 / 6, 0, 0, 2.0 / 6, 0});  // a zero column stays zero
  expect_near_all(run(2), {1, -4 / std::sqrt(20.0), 0, 0, 2 / std::sqrt(20.0), 0});
}

TEST(CumProd, ForwardReversedAndExclusive) {
  auto run = [](int64_t exclusive, int64_t reverse) {
    OneNode n(26);
    int x = n.input("x", {2, 3}, {1, 2, 3, 4, 5, 6});
    int axis = n.initializer("axis", DType::i64, {}, {1});
    n.node("CumProd", {x, axis}, {{"exclusive", integer(exclusive)}, {"reverse", integer(reverse)}});
    return n.run();
  };
  expect_near_all(run(0, 0), {1, 2, 6, 4, 20, 120});
  expect_near_all(run(1, 0), {1, 1, 2, 1, 4, 20});
  expect_near_all(run(0, 1), {6, 6, 3, 120, 30, 6});
  expect_near_all(run(1, 1), {6, 3, 1, 30, 6, 1});
}

}  // namespace
}  // namespace lockstep
