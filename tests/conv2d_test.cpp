// A small CNN block through the column form of 2-D convs (kernel/lower_anchor.cpp), the
// epilogues that join it over flattened positions and a classifier's transposed weight
// (passes/kernel_passes.cpp, passes/constant_layout.cpp): the plan's shape, then its values
// on every target against the float64 reference, and the same bytes on every target.
#include <gtest/gtest.h>

#include <map>

#include "backend/cpu/cpu_codegen.h"
#include "backend/registry.h"
#include "core/random.h"
#include "core/sha256.h"
#include "graph/builder.h"
#include "passes/pipeline.h"
#include "runtime/program.h"
#include "test_util.h"
#include "verify/check.h"
#include "verify/compare.h"

namespace lockstep {
namespace {

using namespace kir;

Tensor random_tensor(const Shape& s, uint64_t seed, double scale) {
  Tensor t(DType::f32, s);
  SplitMix64 rng(seed);
  for (int64_t k = 0; k < t.numel(); ++k) t.data<float>()[k] = static_cast<float>(rng.uniform(-scale, scale));
  return t;
}

// x [1, 8, 7, 7] -> Conv 3x3 pad 1 (16) -> Relu -> Conv 3x3 pad 1 + Conv 1x1 of x (a residual)
// -> x * Sigmoid(x) -> depthwise Conv 3x3 pad 1 -> Conv 1x1 stride 2 group 2 (8) -> Conv 3x3
// dilation 2 asymmetric pads -> GlobalAveragePool -> Flatten -> Gemm transB (10 classes).
Graph cnn_block() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {dim(1), dim(8), dim(7), dim(7)});
  uint64_t seed = 1;
  auto w = [&](const Shape& s) { return b.initializer("w" + std::to_string(seed), random_tensor(s, seed++, 0.3)); };
  auto conv = [&](const std::string& name, std::vector<int> in, Attrs a) { return b.op("Conv", name, in, a); };
  Attrs pad1 = {{"pads", attr_ints({1, 1, 1, 1})}};
  int c1 = b.op("Relu", "/relu", {conv("/conv1", {x, w({16, 8, 3, 3}), w({16})}, pad1)});
  int c2 = conv("/conv2", {c1, w({16, 16, 3, 3})}, pad1);
  int sum = b.op("Add", "/add", {c2, conv("/down", {x, w({16, 8, 1, 1})}, {})});
  int silu = b.op("Mul", "/silu", {sum, b.op("Sigmoid", "/sigmoid", {sum})});
  int dw = conv("/dw", {silu, w({16, 1, 3, 3})}, {{"pads", attr_ints({1, 1, 1, 1})}, {"group", attr_int(16)}});
  int pw = conv("/pw", {dw, w({8, 8, 1, 1})}, {{"strides", attr_ints({2, 2})}, {"group", attr_int(2)}});
  int dil = conv("/dil", {pw, w({8, 8, 3, 3})}, {{"pads", attr_ints({2, 1, 2, 3})}, {"dilations", attr_ints({2, 2})}});
  int pooled = b.op("Flatten", "/flatten", {b.op("GlobalAveragePool", "/pool", {dil})});
  b.output(b.op("Gemm", "/fc", {pooled, w({10, 8}), w({10})}, {{"transB", attr_int(1)}}));
  return b.finish();
}

TensorMap cnn_inputs() { return {{"x", random_tensor({1, 8, 7, 7}, 99, 1.0)}}; }

bool has_kernel_over(const Plan& p, const Shape& s, bool reduces) {  // computing a buffer of shape s
  for (const Kernel& k : p.kernels)
    if (p.buffers[k.out].shape == s && (find_reduce(k.body) != nullptr) == reduces) return true;
  return false;
}

const Kernel* kernel_of(const Plan& p, const std::string& node, bool reduces) {
  for (const Kernel& k : p.kernels)
    if (std::find(k.nodes.begin(), k.nodes.end(), node) != k.nodes.end() && (find_reduce(k.body) != nullptr) == reduces)
      return &k;
  return nullptr;
}

TEST(Conv2dColumns, AConvSumsOverFlattenedPositionsWithItsEpilogue) {
  Graph g = cnn_block();
  PipelineOptions o;
  o.target = &cpu::target_desc();
  Plan p = run_pipeline(g, specialisation_for(g, cnn_inputs()), o).plan;
  // The 3x3 convs of the 7x7 map and the 1x1 one: 49 positions a row, so a tile's lanes run
  // across the map's rows; the 1x1 conv of stride 2 over the 4x4 positions it keeps.
  const Kernel* conv2 = kernel_of(p, "/conv2", true);
  ASSERT_NE(conv2, nullptr) << describe(p);
  EXPECT_EQ(p.buffers[conv2->out].shape, (Shape{1, 16, 49})) << describe(p);
  EXPECT_TRUE(has_kernel_over(p, {1, 8, 16}, true)) << describe(p);
  // The residual Add, over [1, 16, 7, 7] in the graph, is conv2's epilogue over [1, 16, 49]
  // (with the 1x1 conv it adds); its readers read the same elements flat.
  EXPECT_NE(std::find(conv2->nodes.begin(), conv2->nodes.end(), "/add"), conv2->nodes.end()) << describe(p);
  // The depthwise conv keeps the direct form (a copy per tap would cost 9x its input).
  const Kernel* dw = kernel_of(p, "/dw", true);
  ASSERT_NE(dw, nullptr) << describe(p);
  EXPECT_EQ(p.buffers[dw->out].shape, (Shape{1, 16, 7, 7})) << describe(p);
  // The classifier's weight [10, 8], read across lanes by class, is stored [8, 10].
  bool transposed = false;
  for (const Buffer& b : p.buffers) transposed |= b.kind == Buffer::Constant && b.shape == Shape{8, 10};
  EXPECT_TRUE(transposed) << describe(p);
}

// check's fusion groups: a group computed over [1, 16, 49] holds a value of shape
// [1, 16, 7, 7]; it is compared with the reference's in that shape, and agrees.
TEST(Conv2dColumns, EveryFusionGroupAgreesWithTheReference) {
  SKIP_UNLESS_RUNS("cpu");
  CheckOptions o;
  o.targets = {"cpu"};
  o.fresh = 0;
  o.repeat = 1;
  Report r = run_check(cnn_block(), cnn_inputs(), o);
  EXPECT_TRUE(r.agree) << r.verdict;
  ASSERT_FALSE(r.trace.empty());
  bool reshaped = false;
  for (const TracePoint& p : r.trace) {
    EXPECT_TRUE(p.ok) << p.kernel << " (" << p.value << "): cosine " << p.a.cosine << ", rel L2 " << p.a.rel_l2;
    reshaped |= p.value == "/add_output_0";
  }
  EXPECT_TRUE(reshaped) << "the residual Add's group was not compared";
}

LOCKSTEP_ON_EACH_TARGET(Conv2dColumnsOn);

TEST_P(Conv2dColumnsOn, AgreesWithTheReferenceAndGivesTheCpusBytes) {
  Graph g = cnn_block();
  TensorMap in = cnn_inputs();
  Tensor want = compile(g, "ref")->run(in)[0];
  CompileOptions opts;
  opts.checked = true;
  Tensor got = compile(g, GetParam(), opts)->run(in)[0];
  Agreement a = compare(to_ref(got), to_ref(want));
  EXPECT_TRUE(agrees(a)) << "cosine " << a.cosine << ", rel L2 " << a.rel_l2;
  if (GetParam() == "cpu") return;
  SKIP_UNLESS_RUNS("cpu");
  Tensor cpu = compile(g, "cpu")->run(in)[0];
  EXPECT_EQ(sha256_hex(got.bytes.data(), got.bytes.size()), sha256_hex(cpu.bytes.data(), cpu.bytes.size()));
}

}  // namespace
}  // namespace lockstep
