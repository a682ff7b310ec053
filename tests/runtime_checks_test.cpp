// Run-time checks of compiled programs: invalid data is an error naming the node, as in the
// reference, never a silent value; inputs that decide shapes compile the program again.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <tuple>

#include "backend/cuda/cuda_api.h"
#include "backend/cuda/cuda_codegen.h"
#include "backend/cuda/nvrtc_compiler.h"
#include "backend/registry.h"
#include "graph/builder.h"
#include "passes/pipeline.h"
#include "passes/schedule.h"
#include "ref/interpreter.h"
#include "runtime/program.h"
#include "test_util.h"

namespace lockstep {
namespace {

using testing::error_of;

LOCKSTEP_ON_EACH_TARGET(RuntimeChecks);

// y = Gather(x, idx, axis=1) with x [2,4] and run-time int64 indices [2,2].
Graph pick_graph() {
  GraphBuilder b(13);
  int x = b.input("x", DType::f32, {dim(2), dim(4)});
  int idx = b.input("idx", DType::i64, {dim(2), dim(2)});
  b.output(b.op("Gather", "pick", {x, idx}, {{"axis", attr_int(1)}}));
  return b.finish();
}

TensorMap pick_inputs(const std::vector<int64_t>& idx) {
  Tensor x(DType::f32, {2, 4}), i(DType::i64, {2, 2});
  for (int k = 0; k < 8; ++k) x.data<float>()[k] = static_cast<float>(10 * k);
  for (int k = 0; k < 4; ++k) i.data<int64_t>()[k] = idx[k];
  return {{"x", x}, {"idx", i}};
}

TEST_P(RuntimeChecks, GatherInRangeAgreesWithTheReference) {
  Graph g = pick_graph();
  TensorMap in = pick_inputs({3, -4, 0, -1});  // negative indices count from the end
  std::vector<Tensor> out = compile(g, GetParam())->run(in);
  std::vector<RefTensor> ref = run_reference(g, in);
  ASSERT_EQ(out[0].numel(), 8);
  for (int k = 0; k < 8; ++k) EXPECT_EQ(out[0].data<float>()[k], ref[0].f[k]) << k;
  EXPECT_EQ(out[0].data<float>()[0], 30.0f);  // x[0][3]
  EXPECT_EQ(out[0].data<float>()[1], 0.0f);   // x[0][-4] = x[0][0]
}

TEST_P(RuntimeChecks, GatherOutOfRangeIsAnErrorNamingTheNode) {
  Graph g = pick_graph();
  for (bool checked : {false, true}) {
    CompileOptions o;
    o.checked = checked;
    auto p = compile(g, GetParam(), o);
    std::string msg = error_of([&] { p->run(pick_inputs({1, 4, -5, 2})); });  // 4 and -5 are out of [-4, 4)
    EXPECT_NE(msg.find("node 'pick': 2 Gather indices out of range [-4, 4)"), std::string::npos) << msg;
    EXPECT_NE(error_of([&] { run_reference(g, pick_inputs({1, 4, -5, 2})); }).find("out of range"), std::string::npos);
    // The same program with valid indices runs: the count is recomputed every run.
    std::vector<Tensor> out = p->run(pick_inputs({1, 2, 3, 0}));
    EXPECT_EQ(out[0].data<float>()[1], 20.0f);
  }
}

// GatherElements(x, idx, axis=1) with x [2,4] and indices [2,2]: out[i][j] = x[i][idx[i][j]].
TEST_P(RuntimeChecks, GatherElementsAgreesAndOutOfRangeIsAnErrorNamingTheNode) {
  GraphBuilder b(13);
  int x = b.input("x", DType::f32, {dim(2), dim(4)});
  int idx = b.input("idx", DType::i64, {dim(2), dim(2)});
  b.output(b.op("GatherElements", "pick", {x, idx}, {{"axis", attr_int(1)}}));
  Graph g = b.finish();
  auto p = compile(g, GetParam());
  std::vector<Tensor> out = p->run(pick_inputs({3, -4, 0, -1}));
  std::vector<RefTensor> ref = run_reference(g, pick_inputs({3, -4, 0, -1}));
  const float want[] = {30, 0, 40, 70};  // x[0][3], x[0][-4], x[1][0], x[1][-1]
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(out[0].data<float>()[k], want[k]) << k;
    EXPECT_EQ(ref[0].f[k], want[k]) << k;
  }
  std::string msg = error_of([&] { p->run(pick_inputs({1, 4, -5, 2})); });
  EXPECT_NE(msg.find("node 'pick': 2 GatherElements indices out of range [-4, 4)"), std::string::npos) << msg;
  EXPECT_NE(error_of([&] { run_reference(g, pick_inputs({1, 4, -5, 2})); }).find("out of range"), std::string::npos);
}

// GatherND(x, idx) with x [2,4] and indices [2,2]: two (row, column) pairs.
TEST_P(RuntimeChecks, GatherNDAgreesAndOutOfRangeIsAnErrorNamingTheNode) {
  GraphBuilder b(13);
  int x = b.input("x", DType::f32, {dim(2), dim(4)});
  int idx = b.input("idx", DType::i64, {dim(2), dim(2)});
  b.output(b.op("GatherND", "pick", {x, idx}));
  Graph g = b.finish();
  auto p = compile(g, GetParam());
  std::vector<Tensor> out = p->run(pick_inputs({1, 3, -1, -4}));
  std::vector<RefTensor> ref = run_reference(g, pick_inputs({1, 3, -1, -4}));
  const float want[] = {70, 40};  // x[1][3], x[-1][-4]
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(out[0].data<float>()[k], want[k]) << k;
    EXPECT_EQ(ref[0].f[k], want[k]) << k;
  }
  std::string msg = error_of([&] { p->run(pick_inputs({2, 0, 0, 4})); });
  EXPECT_NE(msg.find("node 'pick': 2 GatherND indices out of range"), std::string::npos) << msg;
  EXPECT_NE(error_of([&] { run_reference(g, pick_inputs({2, 0, 0, 4})); }).find("out of range"), std::string::npos);
}

// NegativeLogLikelihoodLoss(x, t) with x [2,4] (x[n][c] = 10 (4n + c)), targets [2], class -1
// ignored, the mean over the samples kept.
TEST_P(RuntimeChecks, LossTargetsAgreeAndAClassOutOfRangeIsAnErrorNamingTheNode) {
  GraphBuilder b(13);
  int x = b.input("x", DType::f32, {dim(2), dim(4)});
  int t = b.input("t", DType::i64, {dim(2)});
  b.output(b.op("NegativeLogLikelihoodLoss", "loss", {x, t}, {{"ignore_index", attr_int(-1)}}));
  Graph g = b.finish();
  auto feed = [](int64_t t0, int64_t t1) {
    TensorMap in = pick_inputs({0, 0, 0, 0});
    Tensor t(DType::i64, {2});
    t.data<int64_t>()[0] = t0;
    t.data<int64_t>()[1] = t1;
    in.erase("idx");
    in["t"] = t;
    return in;
  };
  auto p = compile(g, GetParam());
  using Case = std::tuple<int64_t, int64_t, float>;
  for (auto [t0, t1, want] : {Case{3, -1, -30.0f}, Case{1, 0, -25.0f}}) {  // -x[0][3]; -(10 + 40) / 2
    EXPECT_EQ(p->run(feed(t0, t1))[0].data<float>()[0], want) << t0 << " " << t1;
    EXPECT_EQ(run_reference(g, feed(t0, t1))[0].f[0], want) << t0 << " " << t1;
  }
  std::string msg = error_of([&] { p->run(feed(4, -2)); });
  EXPECT_NE(msg.find("node 'loss': 2 NegativeLogLikelihoodLoss targets not a class in [0, 4)"), std::string::npos)
      << msg;
  EXPECT_NE(error_of([&] { run_reference(g, feed(4, -2)); }).find("is not a class in [0, 4)"), std::string::npos);
}

Tensor floats(const Shape& s, const std::vector<float>& v) {
  Tensor x(DType::f32, s);
  std::copy(v.begin(), v.end(), x.data<float>());
  return x;
}

Tensor int64s(const Shape& s, const std::vector<int64_t>& v) {
  Tensor x(DType::i64, s);
  std::copy(v.begin(), v.end(), x.data<int64_t>());
  return x;
}

// One query, three keys all scoring 0: Y is the mean of the values of the first `keys` keys.
TEST_P(RuntimeChecks, AttentionKeyCountsAgreeAndOneOutOfRangeIsAnErrorNamingTheNode) {
  GraphBuilder b(24);
  int q = b.input("q", DType::f32, {dim(1), dim(1), dim(1), dim(2)});
  int k = b.input("k", DType::f32, {dim(1), dim(1), dim(3), dim(2)});
  int v = b.input("v", DType::f32, {dim(1), dim(1), dim(3), dim(1)});
  int keys = b.input("keys", DType::i64, {dim(1)});
  b.output(b.op("Attention", "attn", {q, k, v, -1, -1, -1, keys}));
  Graph g = b.finish();
  auto feed = [](int64_t n) {
    return TensorMap{{"q", floats({1, 1, 1, 2}, {1, 1})},
                     {"k", floats({1, 1, 3, 2}, {0, 0, 0, 0, 0, 0})},
                     {"v", floats({1, 1, 3, 1}, {1, 2, 6})},
                     {"keys", int64s({1}, {n})}};
  };
  auto p = compile(g, GetParam());
  for (auto [n, want] : {std::pair<int64_t, float>{2, 1.5f}, {3, 3.0f}}) {
    EXPECT_EQ(p->run(feed(n))[0].data<float>()[0], want) << n;
    EXPECT_EQ(static_cast<float>(run_reference(g, feed(n))[0].f[0]), want) << n;  // as stored
  }
  std::string msg = error_of([&] { p->run(feed(4)); });
  EXPECT_NE(msg.find("node 'attn': 1 nonpad_kv_seqlen values not a key count in [0, 3]"), std::string::npos) << msg;
  EXPECT_NE(error_of([&] { run_reference(g, feed(-1)); }).find("is not a key count in [0, 3]"), std::string::npos);
}

// [1, 0] turned by the caches' row: row 0 is no turn, row 1 a quarter turn.
TEST_P(RuntimeChecks, RotaryPositionsAgreeAndOneOutOfRangeIsAnErrorNamingTheNode) {
  GraphBuilder b(23);
  int x = b.input("x", DType::f32, {dim(1), dim(1), dim(1), dim(2)});
  int cos = b.initializer("cos", floats({2, 1}, {1, 0}));
  int sin = b.initializer("sin", floats({2, 1}, {0, 1}));
  int pos = b.input("pos", DType::i64, {dim(1), dim(1)});
  b.output(b.op("RotaryEmbedding", "rope", {x, cos, sin, pos}));
  Graph g = b.finish();
  auto feed = [](int64_t at) { return TensorMap{{"x", floats({1, 1, 1, 2}, {1, 0})}, {"pos", int64s({1, 1}, {at})}}; };
  auto p = compile(g, GetParam());
  for (int64_t at : {0, 1}) {
    Tensor y = p->run(feed(at))[0];
    EXPECT_EQ(y.data<float>()[0], at ? 0.0f : 1.0f) << at;
    EXPECT_EQ(y.data<float>()[1], at ? 1.0f : 0.0f) << at;
    EXPECT_EQ(run_reference(g, feed(at))[0].f[1], at ? 1.0 : 0.0) << at;
  }
  std::string msg = error_of([&] { p->run(feed(2)); });
  EXPECT_NE(msg.find("node 'rope': 1 position_ids not a row of the caches [0, 2)"), std::string::npos) << msg;
  EXPECT_NE(error_of([&] { run_reference(g, feed(-1)); }).find("is not a row of the caches [0, 2)"), std::string::npos);
}

// quot = Div(a, d), int64, both run-time inputs of shape [2,3].
Graph div_graph(DType t = DType::i64) {
  GraphBuilder b(14);
  int a = b.input("a", t, {dim(2), dim(3)});
  int d = b.input("d", t, {dim(2), dim(3)});
  b.output(b.op("Div", "quot", {a, d}));
  return b.finish();
}

template <class T>
Tensor ints(DType t, const Shape& s, const std::vector<T>& v) {
  Tensor x(t, s);
  std::copy(v.begin(), v.end(), x.data<T>());
  return x;
}

TensorMap div_inputs(const std::vector<int64_t>& a, const std::vector<int64_t>& d) {
  return {{"a", ints(DType::i64, {2, 3}, a)}, {"d", ints(DType::i64, {2, 3}, d)}};
}

TEST_P(RuntimeChecks, IntegerDivByZeroIsAnErrorNamingTheNode) {
  Graph g = div_graph();
  TensorMap bad = div_inputs({7, -7, 7, 1, 2, 3}, {2, 0, -2, 0, 1, 1});
  std::string ref_msg = error_of([&] { run_reference(g, bad); });
  EXPECT_NE(ref_msg.find("node 'quot'"), std::string::npos) << ref_msg;
  EXPECT_NE(ref_msg.find("integer division by zero"), std::string::npos) << ref_msg;
  for (bool checked : {false, true}) {
    CompileOptions o;
    o.checked = checked;
    auto p = compile(g, GetParam(), o);
    std::string msg = error_of([&] { p->run(bad); });
    EXPECT_NE(msg.find("node 'quot': 2 zero divisors (integer division by zero)"), std::string::npos) << msg;
    // The same program with nonzero divisors runs and truncates toward zero, as the reference.
    TensorMap good = div_inputs({7, -7, 7, -7, 9, 0}, {2, 2, -2, -2, 3, 5});
    std::vector<Tensor> out = p->run(good);
    std::vector<RefTensor> ref = run_reference(g, good);
    for (int k = 0; k < 6; ++k) EXPECT_EQ(out[0].data<int64_t>()[k], ref[0].i[k]) << k;
    EXPECT_EQ(out[0].data<int64_t>()[1], -3);
  }
}

// rem = Mod(a, d) with the divisor's sign (fmod 0) or the dividend's (fmod 1): a zero divisor is
// an error naming the node, the rest agree with the reference, MIN % -1 included.
TEST_P(RuntimeChecks, IntegerModByZeroIsAnErrorAndSignsFollowFmod) {
  for (int64_t fmod : {0, 1}) {
    GraphBuilder b(14);
    int a = b.input("a", DType::i64, {dim(2), dim(3)});
    int d = b.input("d", DType::i64, {dim(2), dim(3)});
    b.output(b.op("Mod", "rem", {a, d}, {{"fmod", attr_int(fmod)}}));
    Graph g = b.finish();
    auto p = compile(g, GetParam(), CompileOptions{});
    std::string msg = error_of([&] { p->run(div_inputs({7, -7, 7, 1, 2, 3}, {2, 0, -2, 0, 1, 1})); });
    EXPECT_NE(msg.find("node 'rem': 2 zero divisors (integer modulo by zero)"), std::string::npos) << msg;
    int64_t min = std::numeric_limits<int64_t>::min();
    TensorMap good = div_inputs({7, -7, 7, -7, min, 0}, {3, 3, -3, -3, -1, 5});
    std::vector<Tensor> out = p->run(good);
    std::vector<RefTensor> ref = run_reference(g, good);
    std::vector<int64_t> want =
        fmod ? std::vector<int64_t>{1, -1, 1, -1, 0, 0} : std::vector<int64_t>{1, 2, -2, -1, 0, 0};
    for (int k = 0; k < 6; ++k) {
      EXPECT_EQ(out[0].data<int64_t>()[k], want[k]) << "fmod " << fmod << " at " << k;
      EXPECT_EQ(ref[0].i[k], want[k]) << "fmod " << fmod << " at " << k;
    }
  }
}

// The division fused into a larger elementwise kernel, its divisor computed at run time and
// broadcast: y = (a / (d - e)) * a + a with d, e [3].
TEST_P(RuntimeChecks, IntegerDivByZeroInsideAFusedKernelIsAnError) {
  GraphBuilder b(14);
  int a = b.input("a", DType::i64, {dim(2), dim(3)});
  int d = b.input("d", DType::i64, {dim(3)});
  int e = b.input("e", DType::i64, {dim(3)});
  int q = b.op("Div", "quot", {a, b.op("Sub", "diff", {d, e})});
  b.output(b.op("Add", "y", {b.op("Mul", "scale", {q, a}), a}));
  Graph g = b.finish();
  auto feed = [](std::vector<int64_t> d) {
    return TensorMap{{"a", ints(DType::i64, {2, 3}, std::vector<int64_t>{10, 20, 30, -40, 50, 60})},
                     {"d", ints(DType::i64, {3}, d)}, {"e", ints(DType::i64, {3}, std::vector<int64_t>{1, 1, 1})}};
  };
  TensorMap bad = feed({3, 1, 4}), good = feed({3, 5, 4});  // d - e: {2, 0, 3}, then {2, 4, 3}
  kir::Plan plan = testing::plan_for(g, good);
  EXPECT_TRUE(std::any_of(plan.kernels.begin(), plan.kernels.end(), [](const kir::Kernel& k) {
    return std::count(k.nodes.begin(), k.nodes.end(), "quot") && std::count(k.nodes.begin(), k.nodes.end(), "y");
  })) << kir::describe(plan);
  EXPECT_NE(error_of([&] { run_reference(g, bad); }).find("integer division by zero"), std::string::npos);
  for (int limit : {0, -1}) {  // lowering alone, and every pass applied
    CompileOptions o;
    o.pass_limit = limit;
    auto p = compile(g, GetParam(), o);
    std::string msg = error_of([&] { p->run(bad); });
    EXPECT_NE(msg.find("node 'quot': 1 zero divisors (integer division by zero)"), std::string::npos) << limit << ": " << msg;
    std::vector<Tensor> out = p->run(good);
    std::vector<RefTensor> ref = run_reference(g, good);
    for (int k = 0; k < 6; ++k) EXPECT_EQ(out[0].data<int64_t>()[k], ref[0].i[k]) << limit << " " << k;
  }
}

// A constant divisor needs no check kernel; a constant zero divisor is an error when compiling.
TEST_P(RuntimeChecks, ConstantIntegerDivisorsAreCheckedWhenCompiling) {
  for (int64_t zero_at : {-1, 1}) {
    GraphBuilder b(14);
    int a = b.input("a", DType::i64, {dim(2), dim(3)});
    std::vector<int64_t> dv = {3, -2, 5};
    if (zero_at >= 0) dv[zero_at] = 0;
    int d = b.initializer("divisor", ints(DType::i64, {3}, dv));
    b.output(b.op("Div", "quot", {a, d}));
    Graph g = b.finish();
    TensorMap in = {{"a", ints(DType::i64, {2, 3}, std::vector<int64_t>{7, 7, 7, -7, -7, -7})}};
    if (zero_at < 0) {
      EXPECT_TRUE(testing::plan_for(g, in).checks.empty());
      std::vector<Tensor> out = compile(g, GetParam())->run(in);
      std::vector<int64_t> want = {2, -3, 1, -2, 3, -1};
      for (int k = 0; k < 6; ++k) EXPECT_EQ(out[0].data<int64_t>()[k], want[k]) << k;
    } else {
      std::string msg = error_of([&] { compile(g, GetParam())->run(in); });
      EXPECT_NE(msg.find("node 'quot' (Div): integer division by zero"), std::string::npos) << msg;
      EXPECT_NE(error_of([&] { run_reference(g, in); }).find("integer division by zero"), std::string::npos);
    }
  }
}

// MIN / -1 overflows: every target wraps it to MIN, as the reference does, instead of trapping
// (SIGFPE on x86).
TEST_P(RuntimeChecks, IntegerDivOfMinByMinusOneWrapsAsTheReference) {
  constexpr int64_t lo = std::numeric_limits<int64_t>::min();
  Graph g = div_graph();
  TensorMap in = div_inputs({lo, lo, lo, lo + 1, 9, -9}, {-1, 1, 2, -1, -1, -1});
  std::vector<Tensor> out = compile(g, GetParam())->run(in);
  std::vector<RefTensor> ref = run_reference(g, in);
  std::vector<int64_t> want = {lo, lo, lo / 2, -(lo + 1), -9, 9};
  for (int k = 0; k < 6; ++k) {
    EXPECT_EQ(ref[0].i[k], want[k]) << k;
    EXPECT_EQ(out[0].data<int64_t>()[k], want[k]) << k;
  }
  constexpr int32_t lo32 = std::numeric_limits<int32_t>::min();
  Graph g32 = div_graph(DType::i32);
  TensorMap in32 = {{"a", ints(DType::i32, {2, 3}, std::vector<int32_t>{lo32, lo32, 5, lo32 + 1, 7, -8})},
                    {"d", ints(DType::i32, {2, 3}, std::vector<int32_t>{-1, 2, -1, -1, 2, 3})}};
  std::vector<Tensor> out32 = compile(g32, GetParam())->run(in32);
  std::vector<RefTensor> ref32 = run_reference(g32, in32);
  std::vector<int32_t> want32 = {lo32, lo32 / 2, -5, -(lo32 + 1), 3, -2};
  for (int k = 0; k < 6; ++k) {
    EXPECT_EQ(ref32[0].i[k], want32[k]) << k;
    EXPECT_EQ(out32[0].data<int32_t>()[k], want32[k]) << k;
  }
}

// Without a GPU the CUDA source of the division checks still goes through NVRTC.
TEST(RuntimeChecksCuda, IntegerDivChecksCompileWithNvrtc) {
  std::string why;
  if (!cuda::nvrtc(&why)) GTEST_SKIP() << "CUDA codegen not checked: " << why;
  for (DType t : {DType::i64, DType::i32}) {
    Graph g = div_graph(t);
    TensorMap in = {{"a", Tensor(t, {2, 3})}, {"d", Tensor(t, {2, 3})}};
    kir::Plan plan = testing::plan_for(g, in);
    EXPECT_EQ(plan.checks.size(), 1u);
    choose_schedules(plan, cuda::target_desc());
    EXPECT_FALSE(
        cuda::nvrtc_compile(cuda::program_source(plan).text, cuda::default_compute_capability()).image.empty());
  }
}

LOCKSTEP_ON_EACH_TARGET(Respecialise);

// y = ReduceSum(x, axes) with the axes a graph input: its value decides y's shape.
TEST_P(Respecialise, AValueThatDecidesAShapeCompilesAgainAndBack) {
  GraphBuilder b(18);
  int x = b.input("x", DType::f32, {dim(2), dim(3)});
  int axes = b.input("axes", DType::i64, {dim(1)});
  b.output(b.op("ReduceSum", "sum", {x, axes}, {{"keepdims", attr_int(0)}}));
  Graph g = b.finish();
  auto p = compile(g, GetParam());
  Tensor xt(DType::f32, {2, 3});
  for (int k = 0; k < 6; ++k) xt.data<float>()[k] = static_cast<float>(k + 1);
  for (int64_t axis : {1, 0, 1, 1}) {
    Tensor at(DType::i64, {1});
    at.data<int64_t>()[0] = axis;
    std::vector<Tensor> out = p->run({{"x", xt}, {"axes", at}});
    ASSERT_EQ(out[0].shape, (Shape{axis == 1 ? 2 : 3})) << axis;
    std::vector<float> want = axis == 1 ? std::vector<float>{6, 15} : std::vector<float>{5, 7, 9};
    for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(out[0].data<float>()[k], want[k]) << axis << " " << k;
  }
}

// y = Resize(x, scales) (nearest, asymmetric) with the scales a float graph input: they decide
// y's shape, so a new value compiles again, like an integer shape parameter.
TEST_P(Respecialise, ResizeScalesFromAGraphInputCompileAgain) {
  GraphBuilder b(13);
  int x = b.input("x", DType::f32, {dim(1), dim(2), dim(3)});
  int roi = b.initializer("roi", Tensor(DType::f32, {0}));
  int scales = b.input("scales", DType::f32, {dim(3)});
  b.output(b.op("Resize", "resize", {x, roi, scales}, {{"coordinate_transformation_mode", attr_string("asymmetric")}}));
  Graph g = b.finish();
  auto p = compile(g, GetParam());
  Tensor xt(DType::f32, {1, 2, 3});
  for (int k = 0; k < 6; ++k) xt.data<float>()[k] = static_cast<float>(k + 1);
  using Case = std::pair<std::vector<float>, std::vector<float>>;
  for (const auto& [sc, want] : {Case{{1, 1, 2}, {1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6}}, Case{{1, 0.5f, 0.5f}, {1}},
                                 Case{{1, 1, 2}, {1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6}}}) {
    Tensor st(DType::f32, {3});
    for (int k = 0; k < 3; ++k) st.data<float>()[k] = sc[k];
    TensorMap in = {{"x", xt}, {"scales", st}};
    std::vector<Tensor> out = p->run(in);
    ASSERT_EQ(out[0].numel(), static_cast<int64_t>(want.size())) << sc[2];
    std::vector<RefTensor> ref = run_reference(g, in);
    for (size_t k = 0; k < want.size(); ++k) {
      EXPECT_EQ(out[0].data<float>()[k], want[k]) << sc[2] << " " << k;
      EXPECT_EQ(ref[0].f[k], want[k]) << sc[2] << " " << k;
    }
  }
}

}  // namespace
}  // namespace lockstep
