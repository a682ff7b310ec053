// Valid graphs wide or long enough to reach a printer's limits: a Concat of 260 inputs (printed
// as nested selects it passed OpenCL's bracket-nesting limit of 256) and a plan of more buffers
// than a GPU's constant table holds (a 10,000-node chain passed NVIDIA OpenCL's 64 KiB of
// constant data). Each runs on every target and gives the reference's bytes.
#include <gtest/gtest.h>

#include "backend/registry.h"
#include "graph/builder.h"
#include "passes/pipeline.h"
#include "runtime/program.h"
#include "runtime/target.h"
#include "test_util.h"

namespace lockstep {
namespace {

LOCKSTEP_ON_EACH_TARGET(WideGraphs);

// y = Concat(x0 .. x259) along axis 1, each x [1, 2].
Graph concat_graph(int n) {
  GraphBuilder b(13);
  std::vector<int> xs;
  for (int k = 0; k < n; ++k) xs.push_back(b.input("x" + std::to_string(k), DType::f32, {dim(1), dim(2)}));
  b.output(b.op("Concat", "/cat", xs, {{"axis", attr_int(1)}}));
  return b.finish();
}

TensorMap concat_inputs(int n) {
  TensorMap in;
  for (int k = 0; k < n; ++k) {
    Tensor t(DType::f32, {1, 2});
    t.data<float>()[0] = 0.5f * static_cast<float>(k);
    t.data<float>()[1] = -0.25f * static_cast<float>(k);
    in["x" + std::to_string(k)] = t;
  }
  return in;
}

// x [4, 8] + 1, n times: integers stay exact in float32, so every target owes the ref's bytes.
Graph add_chain(int n) {
  GraphBuilder b(13);
  int v = b.input("x", DType::f32, {dim(4), dim(8)});
  Tensor one(DType::f32, {1});
  one.data<float>()[0] = 1;
  int c = b.initializer("one", one);
  for (int k = 0; k < n; ++k) v = b.op("Add", "/add" + std::to_string(k), {v, c});
  b.output(v);
  return b.finish();
}

TensorMap chain_inputs() {
  Tensor t(DType::f32, {4, 8});
  for (int64_t k = 0; k < t.numel(); ++k) t.data<float>()[k] = static_cast<float>(k - 16);
  return {{"x", t}};
}

void expect_refs_bytes(const Graph& g, const TensorMap& in, const std::string& target) {
  std::vector<Tensor> want = compile(g, "ref")->run(in);
  std::vector<Tensor> got = compile(g, target)->run(in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].shape, want[o].shape);
    EXPECT_TRUE(got[o].bytes == want[o].bytes) << "output " << o;
  }
}

TEST_P(WideGraphs, ConcatOf260InputsGivesTheRefsBytes) {
  expect_refs_bytes(concat_graph(260), concat_inputs(260), GetParam());
}

TEST_P(WideGraphs, PlanOf1100BuffersGivesTheRefsBytes) {
  Graph g = add_chain(1100);
  TensorMap in = chain_inputs();
  expect_refs_bytes(g, in, GetParam());
  EXPECT_EQ(compile(g, "ref")->run(in)[0].data<float>()[0], -16.0f + 1100.0f);
}

// The printed program of a GPU target without host-readable globals keeps its buffer table
// in constant memory up to 1,024 buffers and reports larger plans' sizes by stores.
TEST(WideGraphs, LargePlansCarryNoConstantTable) {
  for (const char* name : {"opencl", "metal-sim"}) {
    const TargetInfo* t = find_target(name);
    ASSERT_NE(t, nullptr) << name;
    for (int n : {10, 1100}) {
      PipelineOptions o;
      o.target = &t->desc;
      Graph g = add_chain(n);
      kir::Plan plan = run_pipeline(g, specialisation_for(g, chain_inputs()), o).plan;
      ASSERT_EQ(plan.buffers.size() > 1024, n > 1024) << name << " " << n << ": " << plan.buffers.size() << " buffers";
      std::string all;
      for (const auto& [file, text] : t->source_files(plan)) all += text;
      EXPECT_EQ(all.find("ls_buffer_bytes[") != std::string::npos, n < 1024) << name << " at " << n << " nodes";
      EXPECT_NE(all.find("ls_plan_info"), std::string::npos) << name;
    }
  }
}

}  // namespace
}  // namespace lockstep
