// One small program's kernels as each built-in target prints them, kept under
// tests/data/golden/: a change to a printer shows up as a readable diff of these files. A
// deliberate change is accepted with LOCKSTEP_UPDATE_GOLDEN=1, which rewrites them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "backend/registry.h"
#include "graph/builder.h"
#include "passes/pipeline.h"
#include "runtime/target.h"

namespace lockstep {
namespace {

// x [1, 4, T] -> LeakyRelu -> Conv 4 -> 8 channels, 3 taps, pad 1, bias -> * mask [1, 1, T]:
// a pad, a reduction with its epilogue, a broadcast, and a symbolic length.
Graph golden_graph() {
  GraphBuilder b(17);
  int x = b.input("x", DType::f32, {dim(1), dim(4), dim("T")});
  int mask = b.input("/flow/mask", DType::f32, {dim(1), dim(1), dim("T")});
  Tensor w(DType::f32, {8, 4, 3}), bias(DType::f32, {8});
  for (int64_t k = 0; k < w.numel(); ++k) w.data<float>()[k] = 0.125f * static_cast<float>(k % 7) - 0.375f;
  for (int64_t k = 0; k < bias.numel(); ++k) bias.data<float>()[k] = 0.0625f * static_cast<float>(k);
  int a = b.op("LeakyRelu", "/dec/act", {x}, {{"alpha", attr_float(0.1)}});
  int c = b.op("Conv", "/dec/conv_pre/Conv", {a, b.initializer("w", w), b.initializer("bias", bias)},
               {{"pads", attr_ints({1, 1})}});
  b.output(b.op("Mul", "/dec/Mul", {c, mask}));
  return b.finish();
}

// The kernels of the specialised plan at T = 40, each file headed by its name.
std::string printed(const TargetInfo& t) {
  Graph g = golden_graph();
  TensorMap in = {{"x", Tensor(DType::f32, {1, 4, 40})}, {"/flow/mask", Tensor(DType::f32, {1, 1, 40})}};
  PipelineOptions o;
  kir::TargetDesc desc = t.desc;
  if (t.name == std::string("cpu")) {  // the AVX-512 tiles the file records, whatever the host has
    desc.reduce_lanes = 32;
    desc.reduce_rows = 8;
  }
  o.target = &desc;
  kir::Plan plan = run_pipeline(g, specialisation_for(g, in), o).plan;
  std::string all;
  for (const auto& [name, text] : t.source_files(plan))
    if (name.rfind('k', 0) == 0) all += "=== " + name + "\n" + text;
  return all;
}

class GoldenKernels : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenKernels, PrintAsRecorded) {
  const TargetInfo* t = find_target(GetParam());
  ASSERT_NE(t, nullptr);
  std::string got = printed(*t), path = std::string(LOCKSTEP_TEST_DATA) + "/golden/" + GetParam() + ".txt";
  if (const char* u = std::getenv("LOCKSTEP_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    std::ofstream(path, std::ios::binary) << got;
    GTEST_SKIP() << "rewrote " << path;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path << " is missing: run with LOCKSTEP_UPDATE_GOLDEN=1 to write it";
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(got, want.str())
      << GetParam() << "'s printer changed: diff " << path
      << " against this output, and rewrite it with LOCKSTEP_UPDATE_GOLDEN=1 if the change is meant";
}

INSTANTIATE_TEST_SUITE_P(Printers, GoldenKernels, ::testing::Values("cpu", "cuda", "opencl", "metal"),
                         [](const auto& i) { return i.param; });

}  // namespace
}  // namespace lockstep
