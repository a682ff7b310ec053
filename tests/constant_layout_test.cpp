// block_constant_rows: a reduction's constant whose output rows interleave is stored in blocks
// of the schedule's rows, innermost; the values each index reads are the same.
#include <gtest/gtest.h>

#include "backend/cpu/cpu_codegen.h"
#include "backend/cuda/cuda_codegen.h"
#include "passes/passes.h"

namespace lockstep {
namespace {

using namespace kir;

Buffer buffer(Buffer::Kind kind, const Shape& s) {
  Buffer b;
  b.kind = kind;
  b.shape = s;
  b.name = "b";
  return b;
}

// y[0, co, t] = sum over ci < 2, tap < 3 of x[0, ci, t + tap] * w[..] with w constant, its
// element k holding k: a transposed conv's [Ci, Co, K] (rows second) or a conv's [Co, Ci, K].
Plan with_weight(bool transposed, int64_t rows) {
  Plan p;
  Shape xs = {1, 2, 10}, ws = transposed ? Shape{2, 8, 3} : Shape{8, 2, 3}, ys = {1, 8, 8};
  p.buffers = {buffer(Buffer::Input, xs), buffer(Buffer::Constant, ws), buffer(Buffer::Output, ys)};
  auto w = std::make_shared<Tensor>(DType::f32, ws);
  for (int64_t k = 0; k < w->numel(); ++k) w->data<float>()[k] = static_cast<float>(k);
  p.buffers[1].data = w;
  std::vector<ExprP> wi = transposed ? std::vector<ExprP>{var(3), var(1), var(4)} : std::vector<ExprP>{var(1), var(3), var(4)};
  ExprP term = mul(load(0, xs, DType::f32, {var(0), var(3), add(var(2), var(4))}), load(1, ws, DType::f32, wi));
  Kernel k;
  k.name = "k0";
  k.nodes = {"convT"};
  k.out = 2;
  k.body = reduce(Fn::Dot, term, 3, {2, 3});
  k.schedule.loops = Schedule::Loops::Host;
  k.schedule.rows = rows;
  k.schedule.lanes = 8;
  k.schedule.tile_at = 1;
  p.kernels = {k};
  p.inputs = {0};
  p.outputs = {2};
  return p;
}

const Expr* weight_load(const Plan& p) {
  std::vector<const Expr*> loads;
  collect_loads(p.kernels[0].body, loads);
  for (const Expr* ld : loads)
    if (ld->buf == 1) return ld;
  return nullptr;
}

TEST(ConstantLayout, InterleavedRowsGoInnermostInBlocksOfTheTile) {
  Plan p = with_weight(true, 4);
  PassManager pm;
  block_constant_rows(p, pm);
  ASSERT_EQ(pm.applied_count(), 1);
  EXPECT_EQ(p.buffers[1].shape, (Shape{2, 2, 3, 4}));
  const float* w = p.buffers[1].data->data<float>();
  for (int64_t ci = 0; ci < 2; ++ci)
    for (int64_t co = 0; co < 8; ++co)
      for (int64_t k = 0; k < 3; ++k)  // old [ci, co, k] at new [ci, co / 4, k, co % 4]
        EXPECT_EQ(w[((ci * 2 + co / 4) * 3 + k) * 4 + co % 4], static_cast<float>((ci * 8 + co) * 3 + k));
  const Expr* ld = weight_load(p);
  ASSERT_NE(ld, nullptr);
  EXPECT_EQ(ld->shape, p.buffers[1].shape);
  EXPECT_EQ(to_string(ld->args[1]), to_string(binary(Fn::Div, var(1), icst(4))));
  EXPECT_EQ(to_string(ld->args[3]), to_string(binary(Fn::Mod, var(1), icst(4))));
  // The host printer spells them as the tile's row block and the row within it (in the
  // kernel's own source, which names buffers by number; the program names them by position).
  std::string src = cpu::source_files(p)[1].second;
  EXPECT_NE(src.find("b1[v3*24 + vrow*12 + v4*4 + ((int64_t)c)]"), std::string::npos) << src;
}

TEST(ConstantLayout, RowsAlreadyOutermostOrUntiledStayAsTheyAre) {
  for (Plan p : {with_weight(false, 4), with_weight(true, 1)}) {
    Shape before = p.buffers[1].shape;
    PassManager pm;
    block_constant_rows(p, pm);
    EXPECT_EQ(pm.applied_count(), 0);
    EXPECT_EQ(p.buffers[1].shape, before);
  }
}

TEST(ConstantLayout, AConstantAnotherKernelReadsStaysAsItIs) {
  Plan p = with_weight(true, 4);
  Kernel copy = p.kernels[0];
  copy.name = "k1";
  p.buffers.push_back(buffer(Buffer::Output, {1, 8, 8}));
  copy.out = 3;
  copy.body = load(1, p.buffers[1].shape, DType::f32, {var(0), var(1), var(2)});
  p.kernels.push_back(copy);
  PassManager pm;
  block_constant_rows(p, pm);
  EXPECT_EQ(pm.applied_count(), 0);
  EXPECT_EQ(p.buffers[1].shape, (Shape{2, 8, 3}));
}

TEST(ConstantLayout, TheLimitStopsItLikeAnyPass) {
  Plan p = with_weight(true, 4);
  PassManager pm(0);
  block_constant_rows(p, pm);
  EXPECT_EQ(p.buffers[1].shape, (Shape{2, 8, 3}));
  ASSERT_EQ(pm.log().size(), 1u);
  EXPECT_FALSE(pm.log()[0].applied);
}

}  // namespace
}  // namespace lockstep
