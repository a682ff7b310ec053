// How a strided 1-D ConvTranspose is lowered: phase by phase into [N, s, Co, T/s] where the
// output length is a multiple of the stride (values: the harness cases, on every target).
#include <gtest/gtest.h>

#include <limits>

#include "graph/builder.h"
#include "passes/pipeline.h"

namespace lockstep {
namespace {

using namespace kir;

// x [1, C, 6] through a group-2 ConvTranspose of kernel 6 and stride 3 with `pads`, C output
// channels, and weight element 0 set to `w0`.
Plan lowered(int64_t pad_end, int64_t C = 4, float w0 = 0) {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {dim(1), dim(C), dim(6)});
  Tensor wt(DType::f32, {C, C / 2, 6});
  wt.data<float>()[0] = w0;
  int w = b.initializer("w", wt);
  Attr group;
  group.kind = Attr::Int;
  group.i = 2;
  b.output(b.op("ConvTranspose", "up", {x, w}, {{"strides", attr_ints({3})}, {"pads", attr_ints({1, pad_end})}, {"group", group}}));
  Graph g = b.finish();
  PipelineOptions o;
  o.pass_limit = 0;  // the lowering alone
  return run_pipeline(g, specialisation_for(g, {{"x", Tensor(DType::f32, {1, C, 6})}}), o).plan;
}

bool has_buffer(const Plan& p, const Shape& s) {
  for (const Buffer& b : p.buffers)
    if (b.shape == s) return true;
  return false;
}

TEST(LowerConvTranspose, AnOutputLengthTheStrideDividesIsComputedPhaseByPhase) {
  Plan p = lowered(2);  // 3 * 5 + 6 - 3 = 18 outputs: 3 phases of 6, phases outermost
  EXPECT_TRUE(has_buffer(p, {1, 3, 4, 6})) << describe(p);
  EXPECT_TRUE(has_buffer(p, {1, 4, 18})) << describe(p);
  const Kernel& up = p.kernels[p.kernels.size() - 2];
  ASSERT_NE(find_reduce(up.body), nullptr) << describe(p);
  EXPECT_EQ(find_reduce(up.body)->shape, (Shape{2, 2}));  // 2 channels of a group x 2 taps a phase
  // The stride divides the kernel: every tap of every phase is real, the term a plain product.
  const Expr& term = *find_reduce(up.body)->args[0];
  EXPECT_TRUE(term.op == Op::Binary && term.fn == Fn::Mul) << to_string(find_reduce(up.body)->args[0]);
}

TEST(LowerConvTranspose, OtherLengthsKeepTheDirectForm) {
  Plan p = lowered(1);  // 19 outputs
  EXPECT_TRUE(has_buffer(p, {1, 4, 19})) << describe(p);
  for (const Buffer& b : p.buffers) EXPECT_NE(b.shape.size(), 4u) << describe(p);
}

// The phases need every weight finite (w * 0 must be 0 on an inserted zero): a weight too
// large for shape inference to hold as a value is read from its initializer (the decoder's).
TEST(LowerConvTranspose, WeightsTooLargeToFoldKeepThePhases) {
  Plan p = lowered(2, 256);  // 256 * 128 * 6 weights
  EXPECT_TRUE(has_buffer(p, {1, 3, 256, 6})) << describe(p);
}

// A weight of NaN or +-Inf: the direct form, whose taps on inserted zeros are masked out.
TEST(LowerConvTranspose, ANonFiniteWeightMasksTheTapsOnInsertedZeros) {
  for (float w0 : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    Plan p = lowered(2, 4, w0);
    for (const Buffer& b : p.buffers) EXPECT_NE(b.shape.size(), 4u) << describe(p);
    const Expr& term = *find_reduce(p.kernels.back().body)->args[0];
    EXPECT_EQ(term.op, Op::Select) << to_string(find_reduce(p.kernels.back().body)->args[0]);
  }
}

}  // namespace
}  // namespace lockstep
