// A conv's cheap producer (its pad, a LeakyRelu) computed in the conv's host tiles instead of by
// a kernel of its own (absorb_windows, passes/window.h): the plan loses the producer's kernel,
// and the bytes stay those of the plan that keeps it, at every window geometry a tile meets.
#include <gtest/gtest.h>

#include "backend/registry.h"
#include "graph/builder.h"
#include "runtime/program.h"
#include "test_util.h"
#include "verify/parity.h"
#include "verify/planted_fault.h"

namespace lockstep {
namespace {

struct ConvCase {
  std::string what;
  int64_t cin = 8, cout = 16, K = 3, dilation = 1, stride = 1, pad = 1, T = 40, group = 1;
  bool transposed = false;   // ConvTranspose, stride `stride`, K taps
  std::string before = "LeakyRelu";  // the producer's op before the padded copy ("" for none)
};

// x [1, cin, T] -> before -> (Conv | ConvTranspose) -> y; T < 0: a symbolic "T".
Graph conv_graph(const ConvCase& c) {
  GraphBuilder b(17);
  int x = b.input("x", DType::f32, {dim(1), dim(c.cin), c.T < 0 ? dim("T") : dim(c.T)});
  Attrs attrs;
  if (!c.before.empty()) x = b.op(c.before, "/act", {x}, c.before == "LeakyRelu" ? Attrs{{"alpha", attr_float(0.1f)}} : Attrs{});
  Shape ws = c.transposed ? Shape{c.cin, c.cout, c.K} : Shape{c.cout, c.cin / c.group, c.K};
  Tensor w(DType::f32, ws);
  for (int64_t k = 0; k < w.numel(); ++k) w.data<float>()[k] = 0.02f * static_cast<float>((k * 7) % 23) - 0.21f;
  attrs["pads"] = attr_ints({c.pad, c.pad});
  attrs["strides"] = attr_ints({c.stride});
  if (!c.transposed) attrs["dilations"] = attr_ints({c.dilation});
  if (c.group > 1) attrs["group"] = attr_int(c.group);
  b.output(b.op(c.transposed ? "ConvTranspose" : "Conv", "/conv", {x, b.initializer("w", w)}, attrs));
  return b.finish();
}

TensorMap input_of(const ConvCase& c, int64_t T) {
  Tensor x(DType::f32, {1, c.cin, T});
  for (int64_t k = 0; k < x.numel(); ++k) x.data<float>()[k] = 0.013f * static_cast<float>(k % 89) - 0.5f;
  return {{"x", x}};
}

// The number of the first absorb-window application in a program's pass log; 0 if none.
int first_window(const Program& p) {
  for (const std::string& line : p.pass_log())
    if (line.find(" absorb-window: ") != std::string::npos) return std::stoi(line.substr(1));
  return 0;
}

// The case compiled for cpu computes its producer in the conv's tiles, agrees with the
// reference, and gives the bytes of the same compile cut just before the window.
void expect_window_keeps_bytes(const ConvCase& c) {
  SCOPED_TRACE(c.what);
  Graph g = conv_graph(c);
  TensorMap in = input_of(c, c.T < 0 ? 77 : c.T);
  std::unique_ptr<Program> with = compile(g, "cpu");
  std::vector<Tensor> out = with->run(in);
  int n = first_window(*with);
  ASSERT_GT(n, 0) << "no window in the plan";
  for (const Agreement& a : agreement_with_ref(g, in, out)) EXPECT_TRUE(agrees(a)) << describe(a);
  CompileOptions cut;
  cut.pass_limit = n - 1;
  std::unique_ptr<Program> without = compile(g, "cpu", cut);
  EXPECT_EQ(tensor_sha256(without->run(in)[0]), tensor_sha256(out[0]));
  EXPECT_EQ(first_window(*without), n);  // the same log, the window skipped
  EXPECT_EQ(without->sources().size(), with->sources().size() + 1) << "one kernel more: the producer's";
}

TEST(Windows, ATileLongerThanTheRowAndAPartialLastTile) {
  expect_window_keeps_bytes({"40 columns, 5 taps", 8, 16, 5, 1, 1, 2, 40});
  expect_window_keeps_bytes({"5 columns: one partial tile", 8, 16, 3, 1, 1, 1, 5});
}

TEST(Windows, RowsTheTileDoesNotDivide) { expect_window_keeps_bytes({"13 output channels", 8, 13, 3, 1, 1, 1, 70}); }

TEST(Windows, TapsSpreadWiderThanATile) {
  expect_window_keeps_bytes({"dilation 12: 48 positions between the first and last tap", 4, 8, 5, 12, 1, 24, 100});
}

TEST(Windows, AStridedConvReadsEveryOtherPosition) { expect_window_keeps_bytes({"stride 2", 8, 6, 7, 1, 2, 3, 41}); }

TEST(Windows, APlainPadWithoutAProducerBeforeIt) {
  ConvCase c{"the pad alone", 8, 16, 5, 1, 1, 2, 64};
  c.before = "";
  expect_window_keeps_bytes(c);
}

// A transposed conv reads a zero-padded copy of its input phase by phase; each phase's window
// starts at its own offset (the output's phase var in the window's start).
TEST(Windows, ATransposedConvsPhasesEachStageTheirWindow) {
  ConvCase c{"ConvTranspose stride 4, 8 taps", 16, 8, 8, 1, 4, 2, 29};
  c.transposed = true;
  expect_window_keeps_bytes(c);
}

TEST(Windows, ASymbolicLengthServesEveryLengthWithItsWindow) {
  ConvCase c{"symbolic T", 8, 16, 5, 1, 1, 2, -1};
  expect_window_keeps_bytes(c);
  Graph g = conv_graph(c);
  std::unique_ptr<Program> p = compile(g, "cpu");
  CompileOptions spec;
  spec.symbolic = false;
  for (int64_t T : {77, 1, 33, 200}) {
    TensorMap in = input_of(c, T);
    std::vector<Tensor> out = p->run(in);
    ASSERT_TRUE(p->stats().symbolic) << p->stats().note;
    for (const Agreement& a : agreement_with_ref(g, in, out)) EXPECT_TRUE(agrees(a)) << "T=" << T << ": " << describe(a);
    EXPECT_EQ(tensor_sha256(out[0]), tensor_sha256(compile(g, "cpu", spec)->run(in)[0])) << "T=" << T;
  }
  EXPECT_GT(first_window(*p), 0);
}

// What stays a kernel of its own: a producer dear to compute again per row block (tanh), a
// window over the size limit, a grouped conv (whose input channels follow its output rows).
TEST(Windows, DearProducersWideWindowsAndGroupedConvsKeepTheirKernel) {
  ConvCase tanh{"tanh", 8, 16, 3, 1, 1, 1, 40};
  tanh.before = "Tanh";
  ConvCase wide{"512 input channels", 512, 8, 5, 1, 1, 2, 40};
  ConvCase grouped{"group 2", 8, 6, 3, 1, 1, 1, 40, 2};
  for (const ConvCase& c : {tanh, wide, grouped}) {
    Graph g = conv_graph(c);
    TensorMap in = input_of(c, c.T);
    std::unique_ptr<Program> p = compile(g, "cpu");
    EXPECT_EQ(first_window(*p), 0) << c.what;
    for (const Agreement& a : agreement_with_ref(g, in, p->run(in))) EXPECT_TRUE(agrees(a)) << c.what << ": " << describe(a);
  }
  ConvCase fits = wide;
  fits.cin = 32;
  std::unique_ptr<Program> p = compile(conv_graph(fits), "cpu");
  p->prepare(input_of(fits, fits.T));
  EXPECT_GT(first_window(*p), 0) << "the same conv with 32 input channels";
}

// A pass limit can cut the window like any pass application, and --inject-fault pass:N
// planted at it stages the window from one element along: the output diverges.
TEST(Windows, APassFaultAtTheWindowStagesItWrong) {
  ConvCase c{"faulty window", 8, 16, 5, 1, 1, 2, 40};
  Graph g = conv_graph(c);
  TensorMap in = input_of(c, c.T);
  std::unique_ptr<Program> p = compile(g, "cpu");
  p->prepare(in);
  int n = first_window(*p);
  ASSERT_GT(n, 0);
  CompileOptions bad;
  bad.fault = plant_fault("pass:" + std::to_string(n));
  bad.use_cache = false;
  std::vector<Tensor> out = compile(g, "cpu", bad)->run(in);
  bool all_agree = true;
  for (const Agreement& a : agreement_with_ref(g, in, out)) all_agree &= agrees(a);
  EXPECT_FALSE(all_agree);
  bad.pass_limit = n - 1;  // the same fault with the window cut: nothing goes wrong
  for (const Agreement& a : agreement_with_ref(g, in, compile(g, "cpu", bad)->run(in))) EXPECT_TRUE(agrees(a)) << describe(a);
}

}  // namespace
}  // namespace lockstep
