// Run-time checks of compiled programs: invalid data is an error naming the node, as in the
// reference, never a silent value; inputs that decide shapes compile the program again.
#include <gtest/gtest.h>

#include "graph/builder.h"
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

}  // namespace
}  // namespace lockstep
