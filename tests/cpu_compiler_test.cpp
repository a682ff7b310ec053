// The cpu target's system compiler builds a large program as several translation units, each
// headed by the prelude, and links them; LOCKSTEP_CXX=clang++ builds the same programs.
#include <gtest/gtest.h>

#include "backend/cpu/cpu_compiler.h"
#include "codegen/host_printer.h"
#include "core/dirs.h"
#include "core/process.h"
#include "frontend/onnx_export.h"
#include "graph/builder.h"
#include "test_util.h"

namespace lockstep {
namespace {

std::string program(int pieces) {
  std::string s = "prelude\n";
  for (int k = 0; k < pieces; ++k) s += std::string(codegen::kUnitBreak) + "piece " + std::to_string(k) + "\n";
  return s;
}

TEST(CpuCompiler, ALargeProgramIsCutIntoUnitsEachHeadedByThePrelude) {
  std::string src = program(40);
  std::vector<std::string> units = codegen::translation_units(src, 3);
  ASSERT_EQ(units.size(), 3u);
  std::string joined;
  for (const std::string& u : units) {
    ASSERT_EQ(u.rfind("prelude\n" + std::string(codegen::kUnitBreak), 0), 0u) << u;
    joined += u.substr(8);
  }
  EXPECT_EQ("prelude\n" + joined, src);  // every piece once, in order
  EXPECT_GE(units[0].size(), units[2].size() / 2);
}

// CUDA reads a module's buffer table from its last image: a plan of 7,777 buffers (the
// edge-value suite's) made the epilogue larger than a unit's share, and it landed in an
// earlier one, so the H100 refused the module as "built for a different plan".
TEST(CpuCompiler, TheEpilogueStaysInTheLastUnitHoweverLarge) {
  std::string src = program(40) + std::string(codegen::kUnitBreak) + std::string(4000, 'e') + "\n";
  std::vector<std::string> units = codegen::translation_units(src, 3);
  ASSERT_EQ(units.size(), 3u);
  EXPECT_NE(units.back().find(std::string(4000, 'e')), std::string::npos);
  std::string joined;
  for (const std::string& u : units) joined += u.substr(8);
  EXPECT_EQ("prelude\n" + joined, src);
}

TEST(CpuCompiler, SmallProgramsAndOneCoreStayOneUnit) {
  EXPECT_EQ(codegen::translation_units(program(40), 1), std::vector<std::string>{program(40)});
  EXPECT_EQ(codegen::translation_units(program(codegen::kPiecesPerUnit * 2 - 1), 8).size(), 1u);
  EXPECT_EQ(codegen::translation_units(program(codegen::kPiecesPerUnit * 2), 8).size(), 2u);
  EXPECT_EQ(codegen::translation_units("no breaks", 8), std::vector<std::string>{"no breaks"});
}

// Clang refused GCC's -fsched-pressure, so every model failed under LOCKSTEP_CXX=clang++. In
// a fresh process (the compiler is chosen once a process), `check` builds a conv, a reduction
// and transcendentals with clang and finds them equal to the float64 reference and repeatable.
TEST(CpuCompiler, ClangBuildsProgramsThatAgreeWithTheReference) {
  if (run_process({"clang++", "--version"}).exit_code != 0) GTEST_SKIP() << "no clang++ here";
  PrivateTempDir tmp("lockstep-clang");
  GraphBuilder b(17);
  int x = b.input("x", DType::f32, {dim(1), dim(3), dim(16)});
  Tensor w(DType::f32, {4, 3, 3});
  for (int64_t k = 0; k < w.numel(); ++k) w.data<float>()[k] = 0.1f * static_cast<float>(k % 5) - 0.2f;
  int c = b.op("Conv", "/conv", {x, b.initializer("w", w)}, {{"pads", attr_ints({1, 1})}});
  int t = b.op("Tanh", "/tanh", {c});
  b.output(b.op("ReduceSum", "/sum", {b.op("Sigmoid", "/sig", {t})}, {{"keepdims", attr_int(0)}}));
  b.output(t);
  std::string model = (tmp.path() / "m.onnx").string();
  save_onnx(b.finish(), model);
  ProcessResult r = run_process({"env", "LOCKSTEP_CXX=clang++", "XDG_CACHE_HOME=" + tmp.path().string(),
                                 testing::lockstep_binary(), "check", model, "--targets", "cpu", "--fresh", "1"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("error"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace lockstep
