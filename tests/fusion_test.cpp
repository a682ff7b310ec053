// Which elementwise kernels fusion folds into a reduction's epilogue (passes/kernel_passes.cpp).
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "graph/builder.h"
#include "passes/pipeline.h"

namespace lockstep {
namespace {

using namespace kir;

// y = Conv(x) + r1 + c (r1 of the output's shape, c one number).
Plan fused() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {dim(1), dim(4), dim(8)});
  int r1 = b.input("r1", DType::f32, {dim(1), dim(4), dim(8)});
  int w = b.initializer("w", Tensor(DType::f32, {4, 4, 3}));
  int y = b.op("Add", "/add1", {b.op("Conv", "/conv", {x, w}, {{"pads", attr_ints({1, 1})}}), r1});
  b.output(b.op("Add", "/add2", {y, b.initializer("c", Tensor(DType::f32, {1}))}));
  Graph g = b.finish();
  Tensor t(DType::f32, {1, 4, 8});
  return run_pipeline(g, specialisation_for(g, {{"x", t}, {"r1", t}}), PipelineOptions{}).plan;
}

// Graph inputs other than x that kernel k loads.
std::set<std::string> residuals_read(const Plan& p, const Kernel& k) {
  std::set<std::string> names;
  for (int b : kernel_inputs(k))
    if (p.buffers[b].kind == Buffer::Input && p.buffers[b].name != "x") names.insert(p.buffers[b].name);
  return names;
}

const Kernel& conv_kernel(const Plan& p) {
  for (const Kernel& k : p.kernels)
    if (find_reduce(k.body)) return k;
  throw std::runtime_error("no reduction");
}

TEST(Fusion, AResidualAddJoinsTheConvsEpilogue) {
  Plan p = fused();
  const Kernel& conv = conv_kernel(p);
  EXPECT_EQ(residuals_read(p, conv), (std::set<std::string>{"r1"})) << describe(p);
  EXPECT_EQ(p.kernels.size(), 2u) << describe(p);  // the padded copy, then conv + r1 + c
}

}  // namespace
}  // namespace lockstep
