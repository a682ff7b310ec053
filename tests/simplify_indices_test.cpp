// simplify_indices: index / and % and comparisons folded by the loop extents give the same
// index at every point of the loops (checked by evaluating both trees everywhere), and nothing
// is folded that a larger extent or an unknown value could change.
#include <gtest/gtest.h>

#include <functional>

#include "kernel/kernel.h"
#include "passes/passes.h"

namespace lockstep {
namespace {

using namespace kir;

constexpr int kSymbols = 2;  // the symbolic plans' Symbols buffer

// The value of an index tree at `at` (one value per var), symbol T being `t`.
int64_t eval(const ExprP& e, const std::vector<int64_t>& at, int64_t t = 0) {
  auto a = [&](int k) { return eval(e->args[k], at, t); };
  switch (e->op) {
    case Op::Const: return e->i;
    case Op::Var: return at[e->i];
    case Op::Select: return a(0) ? a(1) : a(2);
    case Op::Load: return e->buf == kSymbols ? t : a(0);  // T, or a flat load: its index
    case Op::Binary:
      switch (e->fn) {
        case Fn::Add: return a(0) + a(1);
        case Fn::Sub: return a(0) - a(1);
        case Fn::Mul: return a(0) * a(1);
        case Fn::Div: return a(0) / a(1);
        case Fn::Mod: return a(0) % a(1);
        case Fn::Lt: return a(0) < a(1);
        case Fn::Le: return a(0) <= a(1);
        case Fn::And: return a(0) && a(1);
        default: break;
      }
    default: break;
  }
  ADD_FAILURE() << "cannot evaluate " << to_string(e);
  return 0;
}

ExprP sub_of(const ExprP& a, const ExprP& b) { return binary(Fn::Sub, a, b); }

int count(const ExprP& e, Fn fn) {
  int n = e->op == Op::Binary && e->fn == fn;
  for (const ExprP& a : e->args) n += count(a, fn);
  return n;
}

// One kernel writing `out` (shape `s`) whose body is a flat load of a [1, 128, 1024] input at `index`.
Plan plan_reading(const Shape& s, const ExprP& index) {
  Plan p;
  Buffer in, out;
  in.kind = Buffer::Input, in.shape = {1, 128, 1024}, in.name = "x";
  out.kind = Buffer::Output, out.shape = s, out.name = "y";
  p.buffers = {in, out};
  Kernel k;
  k.name = "k0";
  k.nodes = {"n"};
  k.out = 1;
  k.body = load_flat(0, in.shape, DType::f32, index);
  p.kernels = {k};
  p.inputs = {0};
  p.outputs = {1};
  return p;
}

// Every point of the output's index space, as var values.
void each_point(const Shape& s, const std::function<void(const std::vector<int64_t>&)>& f) {
  std::vector<int64_t> at(s.size(), 0);
  for (int64_t n = 0; n < shape_numel(s); ++n) {
    f(at);
    for (size_t d = s.size(); d-- > 0;)
      if (++at[d] < s[d]) break;
      else at[d] = 0;
  }
}

// The channel flip of a VITS flow read through a Split (offset 64 channels): the flat index
// of [64, 1024] unflattened into [128, 1024], flipped, flattened again.
ExprP flipped_half(int64_t offset) {
  ExprP flat = add(add(icst(offset * 1024), mul(var(1), icst(1024))), var(2));
  ExprP ch = binary(Fn::Mod, binary(Fn::Div, flat, icst(1024)), icst(128));
  return add(add(icst(127 * 1024), mul(ch, icst(-1024))), binary(Fn::Mod, flat, icst(1024)));
}

TEST(SimplifyIndices, AFlipReadThroughASplitLosesEveryDivisionAndKeepsItsValues) {
  for (int64_t offset : {0, 64}) {
    Shape s = {1, 64, 1024};
    Plan p = plan_reading(s, flipped_half(offset));
    ExprP before = p.kernels[0].body->args[0];
    simplify_indices(p);
    ExprP after = p.kernels[0].body->args[0];
    EXPECT_EQ(count(after, Fn::Div) + count(after, Fn::Mod), 0) << to_string(after);
    each_point(s, [&](const std::vector<int64_t>& at) { ASSERT_EQ(eval(after, at), eval(before, at)); });
  }
}

// The same flip over a symbolic length T: [1, 64, T] read from [1, 128, T] (a symbolic plan,
// as generalise writes it: T is a load of the Symbols buffer, dims affine in it).
Plan symbolic_reading(const ExprP& index) {
  Plan p = plan_reading({1, 64, 1024}, index);
  ExprP t = load_flat(kSymbols, {1}, DType::i64, icst(0));
  p.buffers[0].dims = {icst(1), icst(128), add(mul(t, icst(1)), icst(0))};
  p.buffers[1].dims = {icst(1), icst(64), add(mul(t, icst(1)), icst(0))};
  Buffer sym;
  sym.kind = Buffer::Symbols, sym.dtype = DType::i64, sym.shape = {1}, sym.name = "symbols";
  p.buffers.push_back(sym);
  p.symbols = {"T"};
  p.symbol_buf = kSymbols;
  p.kernels[0].symbols = kSymbols;
  return p;
}

ExprP symbolic_flip(int64_t offset, int64_t past = 0) {
  ExprP t = load_flat(kSymbols, {1}, DType::i64, icst(0));
  ExprP flat = add(add(mul(t, icst(offset)), mul(var(1), t)), add(var(2), icst(past)));
  ExprP ch = binary(Fn::Mod, binary(Fn::Div, flat, t), icst(128));
  return add(add(mul(t, icst(127)), mul(ch, mul(t, icst(-1)))), binary(Fn::Mod, flat, t));
}

TEST(SimplifyIndices, AFlipOverASymbolicLengthLosesEveryDivisionAtEveryLength) {
  for (int64_t offset : {0, 64}) {
    Plan p = symbolic_reading(symbolic_flip(offset));
    ExprP before = p.kernels[0].body->args[0];
    simplify_indices(p);
    ExprP after = p.kernels[0].body->args[0];
    EXPECT_EQ(count(after, Fn::Div) + count(after, Fn::Mod), 0) << to_string(after);
    for (int64_t t : {1, 2, 7, 173, 1024})
      each_point({1, 64, t}, [&](const std::vector<int64_t>& at) { ASSERT_EQ(eval(after, at, t), eval(before, at, t)); });
  }
  // v2 + 1 reaches T at the last column: the division by T stays, the values too.
  Plan past = symbolic_reading(symbolic_flip(0, 1));
  ExprP before = past.kernels[0].body->args[0];
  simplify_indices(past);
  ExprP after = past.kernels[0].body->args[0];
  EXPECT_GT(count(after, Fn::Div) + count(after, Fn::Mod), 0) << to_string(after);
  for (int64_t t : {1, 7, 64})
    each_point({1, 64, t}, [&](const std::vector<int64_t>& at) { ASSERT_EQ(eval(after, at, t), eval(before, at, t)); });
  // A var over a dim that is not affine in T ((T + 31) / 32 tiles) has no bound: nothing folds.
  Plan tiles = symbolic_reading(symbolic_flip(0));
  ExprP t = load_flat(kSymbols, {1}, DType::i64, icst(0));
  tiles.buffers[1].dims[2] = binary(Fn::Div, add(t, icst(31)), icst(32));
  before = tiles.kernels[0].body;
  simplify_indices(tiles);
  EXPECT_EQ(tiles.kernels[0].body, before);
  // x / T with x possibly negative (v2 - 3): kept.
  Plan neg = symbolic_reading(binary(Fn::Div, add(var(2), icst(-3)), t));
  before = neg.kernels[0].body;
  simplify_indices(neg);
  EXPECT_EQ(neg.kernels[0].body, before);
}

TEST(SimplifyIndices, KeepsWhatALargerExtentWouldChange) {
  // v2 up to 1024 * 2: (v1 * 1024 + v2) / 1024 is not v1.
  Plan wide = plan_reading({1, 64, 2048}, flipped_half(0));
  ExprP before = wide.kernels[0].body;
  simplify_indices(wide);
  EXPECT_GT(count(wide.kernels[0].body, Fn::Div), 0);
  each_point({1, 64, 2048}, [&](const std::vector<int64_t>& at) { ASSERT_EQ(eval(wide.kernels[0].body, at), eval(before, at)); });
  // A dim that follows a symbol has no upper bound: nothing folds.
  Plan sym = plan_reading({1, 64, 1024}, flipped_half(0));
  sym.buffers[1].dims = {icst(1), icst(64), var(0)};  // any non-constant dim expression
  before = sym.kernels[0].body;
  simplify_indices(sym);
  EXPECT_EQ(sym.kernels[0].body, before);
  // A dividend that may be negative (C's / truncates) or is a loaded value: kept.
  ExprP neg = binary(Fn::Div, add(var(2), icst(-5)), icst(1024));
  ExprP loaded = binary(Fn::Mod, cast(load(0, {1, 128, 1024}, DType::f32, {var(0), var(1), var(2)}), DType::i64), icst(7));
  for (const ExprP& index : {neg, loaded}) {
    Plan q = plan_reading({1, 64, 1024}, index);
    before = q.kernels[0].body;
    simplify_indices(q);
    EXPECT_EQ(q.kernels[0].body, before) << to_string(index);
  }
}

TEST(SimplifyIndices, AnIndexChoiceThatHoldsEverywhereGoesAndAFloatOneStays) {
  // A transposed conv's phase taps: ((2 - (v2 + 2) % 2) % 2) + 2 * v3 < 4 with v3 a tap in [0, 2)
  // holds everywhere; < 3 does not (phase 1, tap 1).
  ExprP phase = binary(Fn::Mod, binary(Fn::Sub, icst(2), binary(Fn::Mod, add(var(2), icst(2)), icst(2))), icst(2));
  ExprP tap = add(phase, mul(var(3), icst(2)));
  auto lt = [&](int64_t bound) { return binary(Fn::Lt, tap, icst(bound)); };
  auto summed = [](const ExprP& term) { return reduce(Fn::Add, term, 3, {2}); };
  auto weight = [&](int64_t bound) { return load_flat(0, {1, 128, 1024}, DType::f32, select(lt(bound), sub_of(icst(3), tap), icst(0))); };
  Plan p = plan_reading({1, 64, 1024}, icst(0));
  p.kernels[0].body = summed(weight(4));
  simplify_indices(p);
  EXPECT_FALSE(p.kernels[0].body->has & Expr::kSelect) << to_string(p.kernels[0].body);
  p.kernels[0].body = summed(weight(3));
  ExprP kept = p.kernels[0].body;
  simplify_indices(p);
  EXPECT_EQ(p.kernels[0].body, kept);
  // A float term behind the same everywhere-true mask keeps it: removing it would turn a
  // masked term summed by add into a product stepped by fma, another rounding.
  ExprP x = load(0, {1, 128, 1024}, DType::f32, {var(0), var(1), var(2)});
  p.kernels[0].body = summed(select(lt(4), x, cst(0, DType::f32)));
  kept = p.kernels[0].body;
  simplify_indices(p);
  EXPECT_EQ(p.kernels[0].body, kept);
}

TEST(SimplifyIndices, AProductOfTwoIndicesIsLeftAloneAndSharedSubtreesAreWalkedOnce) {
  // Neither side a constant: no range, nothing folds (this once recursed without end).
  ExprP product = mul(binary(Fn::Mod, var(1), icst(3)), binary(Fn::Mod, var(2), icst(5)));
  Plan p = plan_reading({1, 64, 1024}, binary(Fn::Div, add(product, icst(7)), icst(100)));
  ExprP before = p.kernels[0].body;
  simplify_indices(p);
  EXPECT_EQ(p.kernels[0].body, before);
  // 48 levels, each reading the one below twice: a tree of 2^48 nodes held as a DAG of 150.
  ExprP f = add(mul(var(1), icst(1024)), var(2));
  for (int level = 0; level < 48; ++level) f = add(binary(Fn::Mod, f, icst(1000003)), binary(Fn::Div, f, icst(7)));
  Plan deep = plan_reading({1, 64, 1024}, f);
  simplify_indices(deep);  // returns: every node is visited once
  EXPECT_EQ(deep.kernels[0].body->op, Op::Load);
}

// kir::same, which the passes use to recognise an index they built: node by node (types,
// shapes and float bits included), and bounded: two equal trees too large to walk are kept
// apart (false, the answer every caller takes as safe) instead of being printed and compared.
TEST(SimplifyIndices, SameComparesNodesWithinABudget) {
  auto built = [](int levels) {
    ExprP f = add(mul(var(1), icst(1024)), var(2));
    for (int level = 0; level < levels; ++level) f = add(binary(Fn::Mod, f, icst(1000003)), binary(Fn::Div, f, icst(7)));
    return f;
  };
  EXPECT_TRUE(same(built(6), built(6)));  // separately built, 2^6-fold as trees
  EXPECT_FALSE(same(built(6), built(7)));
  EXPECT_FALSE(same(icst(1), cst(1, DType::i32)));
  EXPECT_FALSE(same(cst(0.0, DType::f32), cst(-0.0, DType::f32)));
  EXPECT_FALSE(same(load_flat(0, {4}, DType::f32, var(0)), load_flat(0, {8}, DType::f32, var(0))));
  ExprP deep = built(48);
  EXPECT_TRUE(same(deep, deep));            // the same node: at once
  EXPECT_FALSE(same(deep, built(48)));      // 2^48 nodes as trees: the budget ends it
  EXPECT_TRUE(same(built(10), built(10), int64_t{1} << 20));
}

}  // namespace
}  // namespace lockstep
