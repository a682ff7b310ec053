// Planted faults (--inject-fault): each does exactly the bug it names, computed here by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/registry.h"
#include "graph/builder.h"
#include "runtime/program.h"
#include "test_util.h"
#include "verify/faults.h"
#include "verify/planted_fault.h"

namespace lockstep {
namespace {

using testing::error_of;

using testing::row;
using testing::values;

const std::vector<float> kX = {1, 2, 3, 4, 5, 6, 7, 8};
const std::vector<float> kC = {10, 20, 30, 40, 50, 60, 70, 80};

// y = x + c (node "add"), x an input, c a constant; both [1,8].
Graph add_graph() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {dim(1), dim(8)});
  int c = b.initializer("c", row(kC));
  int y = b.op("Add", "add", {x, c});
  b.output(y);
  return b.finish();
}

std::vector<float> run_on(const std::string& target, const Graph& g, const std::string& fault, bool checked = false,
                          int pass_limit = -1) {
  CompileOptions o;
  o.fault = plant_fault(fault);
  o.checked = checked;
  o.pass_limit = pass_limit;
  return values(compile(g, target, o)->run({{"x", row(kX)}})[0]);
}

std::vector<float> run_with(const Graph& g, const std::string& fault, bool checked = false, int pass_limit = -1) {
  return run_on("cpu", g, fault, checked, pass_limit);
}

// The faults every target plants the same way, on each target (cuda where it can run).
LOCKSTEP_ON_EACH_TARGET(TargetFaults);

TEST(VerifyFaults, ParseKnowsEachKindAndRejectsTheRest) {
  EXPECT_EQ(parse_fault("").kind, Fault::None);
  EXPECT_EQ(parse_fault("staging-reuse").kind, Fault::StagingReuse);
  EXPECT_EQ(parse_fault("cache-by-name").kind, Fault::CacheByName);
  Fault k = parse_fault("kernel:/dec/conv_pre/Conv");
  EXPECT_EQ(k.kind, Fault::Kernel);
  EXPECT_EQ(k.node, "/dec/conv_pre/Conv");
  EXPECT_EQ(parse_fault("uninit:a:b").node, "a:b");  // node names may hold ':'
  EXPECT_EQ(parse_fault("pass:17").pass, 17);
  EXPECT_NE(error_of([] { parse_fault("bitflip"); }).find("unknown fault kind 'bitflip'"), std::string::npos);
  EXPECT_NE(error_of([] { parse_fault("kernel"); }).find("needs a WHERE"), std::string::npos);
  EXPECT_NE(error_of([] { parse_fault("staging-reuse:3"); }).find("takes no"), std::string::npos);
  EXPECT_NE(error_of([] { parse_fault("pass:0"); }).find(">= 1"), std::string::npos);
  EXPECT_NE(error_of([] { parse_fault("pass:3x"); }).find(">= 1"), std::string::npos);
}

TEST(VerifyFaults, NodeFaultMustNameANodeOfTheModel) {
  Graph g = add_graph();
  EXPECT_EQ(error_of([&] { check_fault_applies("kernel:add", g); }), "");
  EXPECT_NE(error_of([&] { check_fault_applies("uninit:mul", g); }).find("no node named 'mul'"), std::string::npos);
}

TEST_P(TargetFaults, KernelFaultReadsTheLargestInputOffByOne) {
  // x and c are the same size; the first load in the tree (x) moves: y[i] = x[min(i+1, 7)] + c[i].
  std::vector<float> y = run_on(GetParam(), add_graph(), "kernel:add");
  for (int i = 0; i < 8; ++i) EXPECT_EQ(y[i], kX[std::min(i + 1, 7)] + kC[i]) << i;
  // Another graph without that node compiles correctly.
  std::vector<float> clean = run_on(GetParam(), add_graph(), "kernel:other");
  for (int i = 0; i < 8; ++i) EXPECT_EQ(clean[i], kX[i] + kC[i]);
}

TEST_P(TargetFaults, UninitLeavesTheSecondHalfOfTheOutputUnwritten) {
  std::vector<float> poisoned = run_on(GetParam(), add_graph(), "uninit:add", /*checked=*/true);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(poisoned[i], kX[i] + kC[i]) << i;
  for (int i = 4; i < 8; ++i) EXPECT_TRUE(std::isnan(poisoned[i])) << "checked mode poisons unwritten memory";
  std::vector<float> clean = run_on(GetParam(), add_graph(), "uninit:other", /*checked=*/true);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(clean[i], kX[i] + kC[i]) << i;
}

TEST(VerifyFaults, UninitOnCpuKeepsFreshOutputMemory) {
  std::vector<float> y = run_with(add_graph(), "uninit:add");
  for (int i = 0; i < 4; ++i) EXPECT_EQ(y[i], kX[i] + kC[i]);
  for (int i = 4; i < 8; ++i) EXPECT_EQ(y[i], 0.0f) << "fresh output memory is zero";
}

// z = Slice(x, 2..6) + 1: the slice is a view, inlined into the Add by application #1.
Graph slice_graph() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {dim(1), dim(8)});
  Tensor st(DType::i64, {1}), en(DType::i64, {1}), ax(DType::i64, {1});
  st.data<int64_t>()[0] = 2;
  en.data<int64_t>()[0] = 6;
  ax.data<int64_t>()[0] = 1;
  int s = b.op("Slice", "slice", {x, b.initializer("st", st), b.initializer("en", en), b.initializer("ax", ax)});
  Tensor one(DType::f32, {});
  one.data<float>()[0] = 1;
  int z = b.op("Add", "add", {s, b.initializer("one", one)});
  b.output(z);
  return b.finish();
}

TEST_P(TargetFaults, PassFaultOffsetsTheInlinedIndexOfThatApplicationOnly) {
  Graph g = slice_graph();
  auto p = compile(g, GetParam());
  p->run({{"x", row(kX)}});
  ASSERT_FALSE(p->pass_log().empty());
  EXPECT_NE(p->pass_log()[0].find("#1 inline-view"), std::string::npos) << p->pass_log()[0];
  // The Add reads the slice at i+1 (clamped to the slice's 4 elements): z[i] = x[2 + min(i+1, 3)] + 1.
  std::vector<float> z = run_on(GetParam(), g, "pass:1");
  ASSERT_EQ(z.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(z[i], kX[2 + std::min(i + 1, 3)] + 1) << i;
  // With the application skipped (--pass-limit 0) the bug is not applied.
  std::vector<float> clean = run_on(GetParam(), g, "pass:1", false, 0);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(clean[i], kX[2 + i] + 1) << i;
  EXPECT_NE(error_of([&] { check_pass_fault("pass:99", p->pass_log()); }).find("only"), std::string::npos);
}

const std::vector<float> kD = {-1, -2, -3, -4, -5, -6, -7, -8};

// y1 = x * c and y2 = x + d: two constants of one staging slot's size.
Graph two_constant_graph() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {dim(1), dim(8)});
  b.output(b.op("Mul", "mul", {x, b.initializer("c", row(kC))}));
  b.output(b.op("Add", "add", {x, b.initializer("d", row(kD))}));
  return b.finish();
}

// One slot of one constant's size: with the wait skipped, both uploads are copied from the slot
// after the second was written into it, so the first constant's resident copy holds the second's
// bytes (the race of docs/why.md, lost every time).
TEST_P(TargetFaults, StagingReuseCopiesTheNextUploadIntoTheFirstConstant) {
  Graph g = two_constant_graph();
  CompileOptions o;
  o.staging_slots = 1;
  o.staging_slot_bytes = 8 * sizeof(float);
  o.fault = plant_fault("staging-reuse");
  auto p = compile(g, GetParam(), o);
  TensorMap in{{"x", row(kX)}};
  p->prepare(in);  // the constants' uploads alone, read back before the input reuses the slot
  std::vector<std::string> changed;
  for (const auto& c : p->check_constants())
    if (c.host_sha256 != c.resident_sha256) changed.push_back(c.value);
  ASSERT_EQ(changed.size(), 1u) << "the first upload of the two is overwritten";
  std::vector<Tensor> outs = p->run(in);
  const std::vector<float>& both = changed[0] == "c" ? kD : kC;  // what the slot held last
  std::vector<float> y1 = values(outs[0]), y2 = values(outs[1]);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(y1[i], kX[i] * both[i]) << i;
  for (int i = 0; i < 8; ++i) EXPECT_EQ(y2[i], kX[i] + both[i]) << i;
  // Without the fault the same tiny pool waits, and both constants arrive intact.
  o.fault.reset();
  auto q = compile(g, GetParam(), o);
  outs = q->run({{"x", row(kX)}});
  for (const auto& c : q->check_constants()) EXPECT_EQ(c.host_sha256, c.resident_sha256) << c.value;
  for (int i = 0; i < 8; ++i) EXPECT_EQ(values(outs[0])[i], kX[i] * kC[i]) << i;
  for (int i = 0; i < 8; ++i) EXPECT_EQ(values(outs[1])[i], kX[i] + kD[i]) << i;
}

// y = x OP c for two ops: same buffers, different code.
Graph binary_graph(const std::string& op) {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {dim(1), dim(8)});
  b.output(b.op(op, "n", {x, b.initializer("c", row(kC))}));
  return b.finish();
}

// The only in-process cache-by-name compiles of the test binary: the fault's slot is the process's.
TEST_P(TargetFaults, CacheByNameHandsTheFirstModuleToLaterCompiles) {
  const std::string t = GetParam();
  CompileOptions o;
  o.fault = plant_fault("cache-by-name");
  std::vector<float> a = values(compile(binary_graph("Add"), t, o)->run({{"x", row(kX)}})[0]);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(a[i], kX[i] + kC[i]);
  // A Mul with the same buffers runs the Add's stale module.
  std::vector<float> m = values(compile(binary_graph("Mul"), t, o)->run({{"x", row(kX)}})[0]);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(m[i], kX[i] + kC[i]) << "stale module";
  // A program with other buffers is refused instead of run out of bounds.
  EXPECT_NE(error_of([&] { compile(slice_graph(), t, o)->run({{"x", row(kX)}}); }).find("stale cache entry"),
            std::string::npos);
  // Without the fault, content keys keep them apart.
  std::vector<float> ok = values(compile(binary_graph("Mul"), t)->run({{"x", row(kX)}})[0]);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(ok[i], kX[i] * kC[i]);
}

}  // namespace
}  // namespace lockstep
