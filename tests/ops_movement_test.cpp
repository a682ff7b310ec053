// Data-movement ops (Slice, Split, Reshape, Pad, ...) on the exporter idioms lockstep's models
// use, against values computed here by plain loops, plus the errors users see.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>

#include "core/error.h"
#include "graph/builder.h"
#include "ops/infer.h"
#include "ref/interpreter.h"
#include "runtime/program.h"
#include "test_util.h"

namespace lockstep {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

Tensor ints(std::vector<int64_t> v, Shape s = {}, DType t = DType::i64) {
  if (s.empty() && v.size() != 1) s = {static_cast<int64_t>(v.size())};
  Tensor out(t, s);
  for (size_t k = 0; k < v.size(); ++k) {
    if (t == DType::i32) out.data<int32_t>()[k] = static_cast<int32_t>(v[k]);
    else out.data<int64_t>()[k] = v[k];
  }
  return out;
}

Tensor ints1(std::vector<int64_t> v) { return ints(v, {static_cast<int64_t>(v.size())}); }

// x[k] = k, so every output element names the input element it came from.
Tensor iota(Shape s) {
  Tensor t(DType::f32, s);
  for (int64_t k = 0; k < t.numel(); ++k) t.data<float>()[k] = static_cast<float>(k);
  return t;
}

std::vector<Dim> dims(const Shape& s) {
  std::vector<Dim> d;
  for (int64_t v : s) d.push_back(dim(v));
  return d;
}

std::vector<RefTensor> run(const Graph& g, const std::vector<Tensor>& feed) {
  TensorMap m;
  for (size_t k = 0; k < feed.size(); ++k) m[g.values[g.inputs[k]].name] = feed[k];
  return run_reference(g, m);
}

using testing::error_of;

// ---- Slice ----

// torch.flip(x, [1]) as PyTorch exports it: start -1, end INT64_MIN (or -INT64_MAX), step -1.
TEST(Slice, FlipWithInt64MinEndReversesTheAxis) {
  for (int64_t end : {kMin, -kMax}) {
    GraphBuilder b(13);
    int x = b.input("x", DType::f32, dims({2, 3, 4}));
    int y = b.op("Slice", "flip", {x, b.initializer("s" + std::to_string(end), ints1({-1})),
                                   b.initializer("e", ints1({end})), b.initializer("a", ints1({1})),
                                   b.initializer("st", ints1({-1}))});
    b.output(y);
    Graph g = b.finish();
    RefTensor out = run(g, {iota({2, 3, 4})})[0];
    ASSERT_EQ(out.shape, (Shape{2, 3, 4}));
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 4; ++k)
          EXPECT_EQ(out.f[(i * 3 + j) * 4 + k], (i * 3 + (2 - j)) * 4 + k);
  }
}

// x[:, 2:] writes end INT64_MAX; x[:, :h] keeps the head.
TEST(Slice, Int64MaxEndTakesTheRestOfTheAxis) {
  GraphBuilder b(13);
  int x = b.input("x", DType::f32, dims({2, 5}));
  int tail = b.op("Slice", "tail", {x, b.initializer("s", ints1({2})), b.initializer("e", ints1({kMax})),
                                    b.initializer("a", ints1({-1}))});
  int head = b.op("Slice", "head", {x, b.initializer("z", ints1({0})), b.initializer("h", ints1({2})),
                                    b.initializer("a1", ints1({1}))});
  b.output(tail);
  b.output(head);
  Graph g = b.finish();
  auto out = run(g, {iota({2, 5})});
  ASSERT_EQ(out[0].shape, (Shape{2, 3}));
  ASSERT_EQ(out[1].shape, (Shape{2, 2}));
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) EXPECT_EQ(out[0].f[i * 3 + j], i * 5 + 2 + j);
    for (int j = 0; j < 2; ++j) EXPECT_EQ(out[1].f[i * 2 + j], i * 5 + j);
  }
}

// Steps of 2 and -2 with out-of-range bounds, checked against Python's slicing rules.
TEST(Slice, StridedAndClampedBoundsFollowPythonSlicing) {
  struct Case { int64_t start, end, step; std::vector<double> want; };
  // x = [0..9]: x[1:100:3], x[-1:-100:-2], x[8:2:-3], x[5:5:1], x[-100:3:1]
  std::vector<Case> cases = {{1, 100, 3, {1, 4, 7}}, {-1, -100, -2, {9, 7, 5, 3, 1}},
                             {8, 2, -3, {8, 5}}, {5, 5, 1, {}}, {-100, 3, 1, {0, 1, 2}}};
  for (const Case& cs : cases) {
    GraphBuilder b(11);
    int x = b.input("x", DType::f32, dims({10}));
    b.output(b.op("Slice", "s", {x, b.initializer("s", ints1({cs.start})),
                                 b.initializer("e", ints1({cs.end})), b.initializer("a", ints1({0})),
                                 b.initializer("st", ints1({cs.step}))}));
    RefTensor out = run(b.finish(), {iota({10})})[0];
    EXPECT_EQ(out.f, cs.want) << cs.start << ":" << cs.end << ":" << cs.step;
  }
}

// Python's slice rule (CPython's PySlice_AdjustIndices), with the one place ONNX differs: a
// start before the beginning clamps to 0 even for negative steps (the spec clamps starts to
// [0, dim-1] there, ONNX Runtime too), where Python would give an empty slice.
std::vector<double> onnx_slice(int64_t len, int64_t start, int64_t stop, int64_t step) {
  auto adjust = [&](int64_t v, bool is_start) {
    if (v < 0) {
      v = v < -len ? -1 : v + len;  // written so INT64_MIN does not overflow
      if (v < 0) v = step < 0 && !is_start ? -1 : 0;
    } else if (v >= len) {
      v = step < 0 ? len - 1 : len;
    }
    return v;
  };
  if (len == 0) return {};
  start = adjust(start, true);
  stop = adjust(stop, false);
  std::vector<double> out;
  for (__int128 i = start; step > 0 ? i < stop : i > stop; i += step) out.push_back(static_cast<double>(i));
  return out;
}

TEST(Slice, AgreesWithSliceRulesOnEveryBoundCombination) {
  std::vector<int64_t> bounds = {kMin, -kMax, -7, -5, -4, -3, -1, 0, 1, 3, 4, 5, 7, kMax};
  for (int64_t len : {0, 1, 4}) {
    for (int64_t step : std::vector<int64_t>{kMin, -3, -1, 1, 2, kMax}) {
      GraphBuilder b(13);
      int x = b.input("x", DType::f32, dims({len}));
      int s = b.input("s", DType::i64, dims({1}));
      int e = b.input("e", DType::i64, dims({1}));
      b.output(b.op("Slice", "s", {x, s, e, b.initializer("a", ints1({0})), b.initializer("st", ints1({step}))}));
      Graph g = b.finish();
      for (int64_t start : bounds)
        for (int64_t end : bounds)
          EXPECT_EQ(run(g, {iota({len}), ints1({start}), ints1({end})})[0].f,
                    onnx_slice(len, start, end, step))
              << "len " << len << " [" << start << ":" << end << ":" << step << "]";
    }
  }
}

TEST(Slice, AttributesBeforeOpset10) {
  GraphBuilder b(9);
  int x = b.input("x", DType::f32, dims({3, 4}));
  b.output(b.op("Slice", "s", {x}, {{"starts", attr_ints({1, -3})}, {"ends", attr_ints({kMax, 3})},
                                    {"axes", attr_ints({0, 1})}}));
  RefTensor out = run(b.finish(), {iota({3, 4})})[0];
  ASSERT_EQ(out.shape, (Shape{2, 2}));
  EXPECT_EQ(out.f, (std::vector<double>{5, 6, 9, 10}));
}

TEST(Slice, ShapeRuleKeepsWhatItCanSee) {
  GraphBuilder b(13);
  int x = b.input("x", DType::f32, {dim(1), dim(192), dim("T")});
  int starts = b.input("starts", DType::i64, dims({1}));
  int known = b.op("Slice", "known", {x, b.initializer("s", ints1({96})), b.initializer("e", ints1({kMax})),
                                      b.initializer("a", ints1({1}))});
  int time = b.op("Slice", "time", {x, b.initializer("z", ints1({0})), b.initializer("e2", ints1({-1})),
                                    b.initializer("a2", ints1({2}))});
  int dynamic = b.op("Slice", "dynamic", {x, starts, b.initializer("e3", ints1({kMax})),
                                          b.initializer("a3", ints1({1}))});
  Graph g = b.finish();
  GraphTypes t = infer_graph(g);
  EXPECT_EQ(t.type[known].dims, (Shape{1, 96, -1}));
  EXPECT_EQ(t.type[time].dims, (Shape{1, 192, -1}));
  EXPECT_EQ(t.type[dynamic].dims, (Shape{1, -1, -1}));
}

TEST(Slice, ZeroStepIsAnErrorNamingTheNode) {
  GraphBuilder b(13);
  int x = b.input("x", DType::f32, dims({4}));
  b.output(b.op("Slice", "bad_slice", {x, b.initializer("s", ints1({0})), b.initializer("e", ints1({4})),
                                       b.initializer("a", ints1({0})), b.initializer("st", ints1({0}))}));
  Graph g = b.finish();
  std::string msg = error_of([&] { infer_graph(g); });
  EXPECT_NE(msg.find("bad_slice"), std::string::npos) << msg;
  EXPECT_NE(msg.find("0"), std::string::npos) << msg;
}

TEST(HostileDims, OverflowingOutputsAreErrorsNamingTheNode) {
  auto msg_for = [](const char* op, std::vector<int64_t> arg) {
    GraphBuilder b(13);
    int x = b.input("x", DType::f32, dims({4, 4}));
    b.output(b.op(op, "hostile", {x, b.initializer("arg", ints1(arg))}));
    Graph g = b.finish();
    return error_of([&] { infer_graph(g); });
  };
  for (auto [op, arg] : std::vector<std::pair<const char*, std::vector<int64_t>>>{
           {"Tile", {kMax, 2}}, {"Pad", {0, kMax, 0, kMax}}, {"Pad", {-3, 0, -2, 0}},
           {"Pad", {kMin, 0, 0, 0}}, {"Expand", {kMax, 4}}, {"Reshape", {kMax, kMax, -1}}}) {
    std::string msg = msg_for(op, arg);
    EXPECT_NE(msg.find("hostile"), std::string::npos) << op << ": " << msg;
  }
}

// ---- Split ----

void expect_split(const std::vector<RefTensor>& out, const std::vector<int64_t>& sizes) {
  // Input iota [2, sum], split on axis 1.
  int64_t total = 0, off = 0;
  for (int64_t s : sizes) total += s;
  ASSERT_EQ(out.size(), sizes.size());
  for (size_t k = 0; k < sizes.size(); ++k) {
    ASSERT_EQ(out[k].shape, (Shape{2, sizes[k]}));
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < sizes[k]; ++j) EXPECT_EQ(out[k].f[i * sizes[k] + j], i * total + off + j);
    off += sizes[k];
  }
}

TEST(Split, SizesAsSecondInputFromOpset13) {
  GraphBuilder b(13);
  int x = b.input("x", DType::f32, dims({2, 6}));
  auto outs = b.node("Split", "split", {x, b.initializer("sizes", ints1({2, 4}))}, {{"axis", attr_int(1)}}, 2);
  for (int v : outs) b.output(v);
  expect_split(run(b.finish(), {iota({2, 6})}), {2, 4});
}

TEST(Split, SizesAsAttributeBeforeOpset13) {
  GraphBuilder b(11);
  int x = b.input("x", DType::f32, dims({2, 6}));
  auto outs = b.node("Split", "split", {x}, {{"axis", attr_int(-1)}, {"split", attr_ints({1, 2, 3})}}, 3);
  for (int v : outs) b.output(v);
  expect_split(run(b.finish(), {iota({2, 6})}), {1, 2, 3});
}

TEST(Split, NumOutputsFromOpset18LeavesTheLastChunkSmaller) {
  GraphBuilder b(18);
  int x = b.input("x", DType::f32, dims({2, 7}));
  auto outs = b.node("Split", "split", {x}, {{"axis", attr_int(1)}, {"num_outputs", attr_int(3)}}, 3);
  for (int v : outs) b.output(v);
  expect_split(run(b.finish(), {iota({2, 7})}), {3, 3, 1});
}

TEST(Split, EqualPartsWithoutSizes) {
  GraphBuilder b(13);
  int x = b.input("x", DType::f32, dims({2, 6}));
  auto outs = b.node("Split", "split", {x}, {{"axis", attr_int(1)}}, 2);
  for (int v : outs) b.output(v);
  expect_split(run(b.finish(), {iota({2, 6})}), {3, 3});
}

TEST(Split, BadSizesAreErrorsNamingTheNode) {
  auto msg_for = [](int opset, int64_t len, std::vector<int64_t> sizes, int nout) {
    GraphBuilder b(opset);
    int x = b.input("x", DType::f32, dims({len}));
    std::vector<int> in = {x};
    if (!sizes.empty()) in.push_back(b.initializer("sizes", ints1(sizes)));
    for (int v : b.node("Split", "coupling_split", in, {}, nout)) b.output(v);
    Graph g = b.finish();
    return error_of([&] { infer_graph(g); });
  };
  std::string sum = msg_for(13, 6, {2, 3}, 2);
  EXPECT_NE(sum.find("coupling_split"), std::string::npos) << sum;
  EXPECT_NE(sum.find("sums to 5"), std::string::npos) << sum;
  std::string uneven = msg_for(13, 7, {}, 2);  // before 18 the parts must be equal
  EXPECT_NE(uneven.find("coupling_split"), std::string::npos) << uneven;
  std::string count = msg_for(13, 6, {6}, 2);
  EXPECT_NE(count.find("coupling_split"), std::string::npos) << count;
  std::string neither = msg_for(18, 6, {}, 2);  // opset 18 needs sizes or num_outputs
  EXPECT_NE(neither.find("num_outputs"), std::string::npos) << neither;
}

// ---- Reshape / Flatten / Squeeze / Unsqueeze ----

TEST(Reshape, ZeroCopiesAndMinusOneInfers) {
  GraphBuilder b(13);
  int x = b.input("x", DType::f32, {dim(2), dim("T"), dim(4)});
  int y = b.op("Reshape", "r", {x, b.initializer("shape", ints1({0, -1}))});
  b.output(y);
  Graph g = b.finish();
  EXPECT_EQ(infer_graph(g).type[y].dims, (Shape{2, -1}));
  RefTensor out = run(g, {iota({2, 3, 4})})[0];
  EXPECT_EQ(out.shape, (Shape{2, 12}));
  for (int k = 0; k < 24; ++k) EXPECT_EQ(out.f[k], k);
}

TEST(Reshape, AllowZeroKeepsAZeroDim) {
  GraphBuilder b(14);
  int x = b.input("x", DType::f32, dims({0, 3}));
  int y = b.op("Reshape", "r", {x, b.initializer("shape", ints1({3, 0}))}, {{"allowzero", attr_int(1)}});
  b.output(y);
  Graph g = b.finish();
  EXPECT_EQ(infer_graph(g).type[y].dims, (Shape{3, 0}));
}

TEST(Reshape, ElementCountMismatchIsAnErrorNamingTheNode) {
  GraphBuilder b(13);
  int x = b.input("x", DType::f32, dims({3, 4}));
  b.output(b.op("Reshape", "to_five", {x, b.initializer("shape", ints1({5, -1}))}));
  Graph g = b.finish();
  std::string msg = error_of([&] { infer_graph(g); });
  EXPECT_NE(msg.find("to_five"), std::string::npos) << msg;
  EXPECT_NE(msg.find("12 elements"), std::string::npos) << msg;
}

TEST(Reshape, UnknownShapeValueStillGivesTheRank) {
  GraphBuilder b(13);
  int x = b.input("x", DType::f32, dims({3, 4}));
  int s = b.input("s", DType::i64, dims({3}));
  int y = b.op("Reshape", "r", {x, s});
  Graph g = b.finish();
  EXPECT_EQ(infer_graph(g).type[y].dims, (Shape{-1, -1, -1}));
}

TEST(Unsqueeze, UnsortedNegativeAxesAsInputAndAsAttribute) {
  for (int opset : {11, 13}) {
    GraphBuilder b(opset);
    int x = b.input("x", DType::f32, dims({3, 4}));
    std::vector<int64_t> axes = {-1, 0};  // output rank 4: axes 3 and 0
    int y = opset < 13 ? b.op("Unsqueeze", "u", {x}, {{"axes", attr_ints(axes)}})
                       : b.op("Unsqueeze", "u", {x, b.initializer("axes", ints1(axes))});
    int z = opset < 13 ? b.op("Squeeze", "sq", {y}, {{"axes", attr_ints({3, -4})}})
                       : b.op("Squeeze", "sq", {y, b.initializer("sqaxes", ints1({3, -4}))});
    b.output(y);
    b.output(z);
    auto out = run(b.finish(), {iota({3, 4})});
    EXPECT_EQ(out[0].shape, (Shape{1, 3, 4, 1})) << opset;
    EXPECT_EQ(out[1].shape, (Shape{3, 4})) << opset;
  }
}

TEST(Squeeze, WithoutAxesDropsEverySizeOneDim) {
  GraphBuilder b(13);
  int x = b.input("x", DType::f32, dims({1, 3, 1, 2}));
  int y = b.op("Squeeze", "sq", {x});
  int f = b.op("Flatten", "fl", {x}, {{"axis", attr_int(-2)}});
  b.output(y);
  b.output(f);
  auto out = run(b.finish(), {iota({1, 3, 1, 2})});
  EXPECT_EQ(out[0].shape, (Shape{3, 2}));
  EXPECT_EQ(out[1].shape, (Shape{3, 2}));
}

TEST(Squeeze, NonUnitAxisIsAnErrorNamingTheNode) {
  GraphBuilder b(13);
  int x = b.input("x", DType::f32, dims({2, 3}));
  b.output(b.op("Squeeze", "squeeze_bad", {x, b.initializer("axes", ints1({1}))}));
  Graph g = b.finish();
  std::string msg = error_of([&] { infer_graph(g); });
  EXPECT_NE(msg.find("squeeze_bad"), std::string::npos) << msg;
}

// ---- repeat_interleave: Unsqueeze -> Tile (or Expand) -> Reshape ----

// y_mask.repeat_interleave(r, dim=2) on [1,1,T]: each time step repeated r times in place.
TEST(RepeatInterleave, UnsqueezeTileReshapeAndExpandVariant) {
  const int64_t T = 5, r = 3;
  for (bool use_expand : {false, true}) {
    GraphBuilder b(13);
    int x = b.input("mask", DType::f32, {dim(1), dim(1), dim("T")});
    int u = b.op("Unsqueeze", "unsq", {x, b.initializer("axes", ints1({3}))});
    int rep = use_expand ? b.op("Expand", "expand", {u, b.initializer("shape", ints1({1, 1, 1, r}))})
                         : b.op("Tile", "tile", {u, b.initializer("reps", ints1({1, 1, 1, r}))});
    int y = b.op("Reshape", "flat", {rep, b.initializer("shape2", ints1({1, 1, -1}))});
    b.output(y);
    Graph g = b.finish();
    EXPECT_EQ(infer_graph(g).type[y].dims, (Shape{1, 1, -1}));
    RefTensor out = run(g, {iota({1, 1, T})})[0];
    ASSERT_EQ(out.shape, (Shape{1, 1, T * r}));
    for (int64_t k = 0; k < T * r; ++k) EXPECT_EQ(out.f[k], k / r) << k;
  }
}

// ---- Tile / Expand / Transpose / Concat / Gather ----

TEST(Tile, RepeatsWholeTensorPerAxis) {
  GraphBuilder b(13);
  int x = b.input("x", DType::i64, dims({2, 3}));
  b.output(b.op("Tile", "t", {x, b.initializer("reps", ints1({2, 2}))}));
  Tensor in = ints({0, 1, 2, 3, 4, 5}, {2, 3});
  RefTensor out = run(b.finish(), {in})[0];
  ASSERT_EQ(out.shape, (Shape{4, 6}));
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j) EXPECT_EQ(out.i[i * 6 + j], (i % 2) * 3 + j % 3);
}

TEST(Expand, BroadcastsBothWays) {
  GraphBuilder b(13);
  int x = b.input("x", DType::f32, dims({3, 1}));
  b.output(b.op("Expand", "e", {x, b.initializer("shape", ints1({2, 1, 4}))}));
  RefTensor out = run(b.finish(), {iota({3, 1})})[0];
  ASSERT_EQ(out.shape, (Shape{2, 3, 4}));
  for (int k = 0; k < 24; ++k) EXPECT_EQ(out.f[k], (k / 4) % 3);
}

TEST(Transpose, DefaultPermReversesAxesForIntegers) {
  GraphBuilder b(13);
  int x = b.input("x", DType::i32, dims({2, 3, 4}));
  b.output(b.op("Transpose", "t", {x}));
  std::vector<int64_t> v(24);
  for (int k = 0; k < 24; ++k) v[k] = k;
  RefTensor out = run(b.finish(), {ints(v, {2, 3, 4}, DType::i32)})[0];
  ASSERT_EQ(out.shape, (Shape{4, 3, 2}));
  EXPECT_EQ(out.dtype, DType::i32);
  for (int a = 0; a < 2; ++a)
    for (int c = 0; c < 3; ++c)
      for (int d = 0; d < 4; ++d) EXPECT_EQ(out.i[(d * 3 + c) * 2 + a], (a * 3 + c) * 4 + d);
}

TEST(Concat, MismatchedNonAxisDimIsAnErrorNamingTheNode) {
  GraphBuilder b(13);
  int x = b.input("x", DType::f32, dims({1, 2, 8}));
  int y = b.input("y", DType::f32, dims({1, 2, 9}));
  b.output(b.op("Concat", "cat_channels", {x, y}, {{"axis", attr_int(1)}}));
  Graph g = b.finish();
  std::string msg = error_of([&] { infer_graph(g); });
  EXPECT_NE(msg.find("cat_channels"), std::string::npos) << msg;
}

TEST(Concat, JoinsAlongTheAxisWithSymbolicDims) {
  GraphBuilder b(13);
  int x = b.input("x", DType::f32, {dim(1), dim(1), dim("T")});
  int y = b.input("y", DType::f32, {dim(1), dim(2), dim("T")});
  int z = b.op("Concat", "cat", {x, y}, {{"axis", attr_int(-2)}});
  b.output(z);
  Graph g = b.finish();
  EXPECT_EQ(infer_graph(g).type[z].dims, (Shape{1, 3, -1}));
  RefTensor out = run(g, {iota({1, 1, 2}), iota({1, 2, 2})})[0];
  EXPECT_EQ(out.f, (std::vector<double>{0, 1, 0, 1, 2, 3}));
}

TEST(Gather, NegativeInt32IndicesOnAnInnerAxis) {
  GraphBuilder b(13);
  int x = b.input("x", DType::f32, dims({2, 4}));
  int idx = b.initializer("idx", ints({-1, 0, 2}, {3}, DType::i32));
  b.output(b.op("Gather", "g", {x, idx}, {{"axis", attr_int(1)}}));
  RefTensor out = run(b.finish(), {iota({2, 4})})[0];
  ASSERT_EQ(out.shape, (Shape{2, 3}));
  EXPECT_EQ(out.f, (std::vector<double>{3, 0, 2, 7, 4, 6}));
}

TEST(Gather, OutOfRangeIndexIsAnErrorNamingTheNode) {
  GraphBuilder b(13);
  int x = b.input("x", DType::f32, dims({2, 4}));
  int idx = b.input("idx", DType::i64, dims({1}));
  b.output(b.op("Gather", "pick", {x, idx}));
  Graph g = b.finish();
  std::string msg = error_of([&] { run(g, {iota({2, 4}), ints1({2})}); });
  EXPECT_NE(msg.find("pick"), std::string::npos) << msg;
  EXPECT_NE(msg.find("out of range"), std::string::npos) << msg;
}

// ---- NonZero, Compress: output lengths counted from values ----

Tensor bools(std::vector<int> v) {
  Tensor t(DType::boolean, {static_cast<int64_t>(v.size())});
  for (size_t k = 0; k < v.size(); ++k) t.data<uint8_t>()[k] = static_cast<uint8_t>(v[k]);
  return t;
}

TEST(NonZero, ListsTheIndicesOfNonzeroElementsAxisByAxis) {
  GraphBuilder b(13);
  int x = b.input("x", DType::f32, dims({2, 3}));
  b.output(b.op("NonZero", "nz", {x}));
  Tensor v(DType::f32, {2, 3});
  std::vector<float> vals = {0, 1, 0, 2, 0, -3};
  std::copy(vals.begin(), vals.end(), v.data<float>());
  RefTensor out = run(b.finish(), {v})[0];
  ASSERT_EQ(out.shape, (Shape{2, 3}));
  EXPECT_EQ(out.i, (std::vector<int64_t>{0, 1, 1, 1, 0, 2}));
}

// A compiled target cannot size NonZero's output from a value it only has at run time: it
// refuses, naming the node and the output.
TEST(NonZero, OfARunTimeValueIsRefusedByACompiledTargetNamingIt) {
  SKIP_UNLESS_RUNS("cpu");
  GraphBuilder b(13);
  int x = b.input("x", DType::f32, dims({2, 3}));
  b.output(b.op("NonZero", "nz", {b.op("Relu", "r", {x})}));
  Graph g = b.finish();
  std::string msg = error_of([&] { compile(g, "cpu")->run({{"x", iota({2, 3})}}); });
  EXPECT_NE(msg.find("'nz'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not known when compiling"), std::string::npos) << msg;
}

TEST(Compress, KeepsTheSlicesWhereTheConditionHoldsAlongTheAxisOrFlat) {
  GraphBuilder b(13);
  int x = b.input("x", DType::f32, dims({2, 3}));
  int c = b.input("c", DType::boolean, dims({3}));
  int f = b.input("f", DType::boolean, dims({5}));
  b.output(b.op("Compress", "along", {x, c}, {{"axis", attr_int(-1)}}));
  b.output(b.op("Compress", "flat", {x, f}));
  std::vector<RefTensor> out = run(b.finish(), {iota({2, 3}), bools({1, 0, 1}), bools({0, 1, 1, 0, 1})});
  ASSERT_EQ(out[0].shape, (Shape{2, 2}));
  EXPECT_EQ(out[0].f, (std::vector<double>{0, 2, 3, 5}));
  ASSERT_EQ(out[1].shape, (Shape{3}));
  EXPECT_EQ(out[1].f, (std::vector<double>{1, 2, 4}));
}

TEST(Compress, AConditionLongerThanTheAxisIsAnErrorNamingTheNode) {
  GraphBuilder b(13);
  int x = b.input("x", DType::f32, dims({2, 3}));
  int c = b.input("c", DType::boolean, {dim("N")});
  b.output(b.op("Compress", "keep", {x, c}, {{"axis", attr_int(1)}}));
  Graph g = b.finish();
  std::string msg = error_of([&] { run(g, {iota({2, 3}), bools({1, 0, 1, 1})}); });
  EXPECT_NE(msg.find("keep"), std::string::npos) << msg;
  EXPECT_NE(msg.find("more than the 3"), std::string::npos) << msg;
}

// ReverseSequence: the first len[b] steps of each batch reversed along time (axis 0 here).
TEST(ReverseSequence, ReversesEachBatchsPrefixAndRefusesALengthPastTheTime) {
  GraphBuilder b(10);
  int x = b.input("x", DType::f32, dims({4, 2}));
  int lens = b.input("lens", DType::i64, dims({2}));
  b.output(b.op("ReverseSequence", "rev", {x, lens}));
  Graph g = b.finish();
  RefTensor out = run(g, {iota({4, 2}), ints1({3, 0})})[0];
  EXPECT_EQ(out.f, (std::vector<double>{4, 1, 2, 3, 0, 5, 6, 7}));
  for (const std::string& target : {std::string("ref"), std::string("cpu")}) {
    if (target != "ref" && !testing::cannot_run(target).empty()) continue;
    std::string msg = error_of([&] { compile(g, target)->run({{"x", iota({4, 2})}, {"lens", ints1({5, 1})}}); });
    EXPECT_NE(msg.find("'rev'"), std::string::npos) << target << ": " << msg;
  }
}

// ---- Pad ----

// x = [1,2,3,4] padded by (2, 1) in each mode, and cropped by negative pads.
TEST(Pad, EveryModeOnOneAxis) {
  struct Case { const char* mode; std::vector<int64_t> pads; std::vector<int64_t> want; };
  std::vector<Case> cases = {{"constant", {2, 1}, {9, 9, 1, 2, 3, 4, 9}},
                             {"reflect", {2, 1}, {3, 2, 1, 2, 3, 4, 3}},
                             {"edge", {2, 1}, {1, 1, 1, 2, 3, 4, 4}},
                             {"wrap", {2, 1}, {3, 4, 1, 2, 3, 4, 1}},
                             {"constant", {-1, 2}, {2, 3, 4, 9, 9}},
                             {"edge", {1, -2}, {1, 1, 2}}};
  for (const Case& cs : cases) {
    GraphBuilder b(19);
    int x = b.input("x", DType::i64, dims({4}));
    b.output(b.op("Pad", "pad", {x, b.initializer("pads", ints1(cs.pads)), b.initializer("v", ints({9}, {}))},
                  {{"mode", attr_string(cs.mode)}}));
    RefTensor out = run(b.finish(), {ints1({1, 2, 3, 4})})[0];
    EXPECT_EQ(out.i, cs.want) << cs.mode << " " << cs.pads[0] << "," << cs.pads[1];
  }
}

TEST(Pad, AttributesBeforeOpset11AndAxesFrom18) {
  {
    GraphBuilder b(10);
    int x = b.input("x", DType::f32, dims({1, 2}));
    b.output(b.op("Pad", "pad", {x}, {{"pads", attr_ints({0, 1, 0, 0})}, {"value", attr_float(-1.5)}}));
    RefTensor out = run(b.finish(), {iota({1, 2})})[0];
    EXPECT_EQ(out.f, (std::vector<double>{-1.5, 0, 1}));
  }
  {
    GraphBuilder b(18);
    int x = b.input("x", DType::f32, dims({2, 2}));
    b.output(b.op("Pad", "pad", {x, b.initializer("pads", ints1({1, 0})), -1, b.initializer("axes", ints1({-2}))}));
    RefTensor out = run(b.finish(), {iota({2, 2})})[0];
    ASSERT_EQ(out.shape, (Shape{3, 2}));
    EXPECT_EQ(out.f, (std::vector<double>{0, 0, 0, 1, 2, 3}));
  }
}

}  // namespace
}  // namespace lockstep
