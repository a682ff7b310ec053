// The opencl target beyond the per-target suites: its source prints on every host, every
// harness case builds on the device's own compiler (so a printer bug fails CI on PoCL), build
// options never relax float maths, an unusable platform or device is a clear error, and a
// launch the device cannot run names the kernel and its ONNX nodes.
#include <gtest/gtest.h>

#include <cstdlib>

#include "backend/opencl/opencl_codegen.h"
#include "backend/opencl/opencl_compiler.h"
#include "backend/opencl/opencl_platform.h"
#include "backend/opencl/opencl_target.h"
#include "backend/registry.h"
#include "core/error.h"
#include "graph/builder.h"
#include "harness.h"
#include "passes/schedule.h"
#include "runtime/target.h"
#include "test_util.h"
#include "verify_cli.h"

namespace lockstep {
namespace {

using lockstep::testing::plan_for;
using namespace lockstep::verify_test;

#define NEED_OPENCL()                                                                     \
  do {                                                                                    \
    std::string why = opencl::unavailable(0);                                             \
    if (!why.empty()) GTEST_SKIP() << "OpenCL builds not checked here: " << why;          \
  } while (0)

TensorMap zero_inputs(const OpCase& c, const Graph& g) {
  TensorMap feed;
  for (size_t k = 0; k < g.inputs.size(); ++k) feed[g.values[g.inputs[k]].name] = Tensor(c.inputs[k].dtype, c.inputs[k].shape);
  return feed;
}

kir::Plan scheduled(const Graph& g, const TensorMap& in) {
  kir::Plan p = plan_for(g, in);
  choose_schedules(p, opencl::target_desc());
  return p;
}

Graph tanh_graph() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {dim(1), dim(64)});
  int y = b.op("Tanh", "the tanh", {x});
  b.rename(y, "y");
  b.output(y);
  return b.finish();
}

TEST(OpenclCodegen, SourcePrintsWithoutAPlatform) {
  Graph g = tanh_graph();
  TensorMap in = {{"x", Tensor(DType::f32, {1, 64})}};
  std::string src = opencl::program_source(scheduled(g, in)).text;
  for (const char* want : {"#pragma OPENCL FP_CONTRACT OFF", "__kernel void", "__global float* restrict p0",
                           "const uint64_t p0", "ls_plan_info(", "// k0: the tanh"})
    EXPECT_NE(src.find(want), std::string::npos) << want << "\n" << src;
  for (const char* never : {"extern \"C\"", "template", "cl_khr_fp64", "long long", "expf("})
    EXPECT_EQ(src.find(never), std::string::npos) << never << "\n" << src;
}

TEST(OpenclCodegen, EveryHarnessCaseBuildsOnTheDevice) {
  NEED_OPENCL();
  opencl::ClCompiler compiler(opencl::context(0));
  size_t cases = 0, unsupported = 0;
  for (const OpCase& c : standard_cases()) {
    Graph g = build_case(c);
    std::string src;
    try {
      src = opencl::program_source(scheduled(g, zero_inputs(c, g))).text;
    } catch (const Error&) {
      ++unsupported;  // refused before code generation, as on every target
      continue;
    }
    EXPECT_FALSE(compiler.compile(src).empty()) << c.name;
    ++cases;
  }
  EXPECT_EQ(cases + unsupported, standard_cases().size());
  EXPECT_GT(cases, 50u);
  std::printf("%zu harness cases built on %s, %zu refused before codegen\n", cases,
              opencl::context(0).device.name.c_str(), unsupported);
}

// A plan that computes in f64 enables cl_khr_fp64 and builds; one that does not never asks.
TEST(OpenclCodegen, F64PlansEnableTheExtension) {
  GraphBuilder b;
  int x = b.input("x", DType::f64, {dim(1), dim(16)});
  b.output(b.op("Tanh", "tanh64", {x}));
  Graph g = b.finish();
  std::string src = opencl::program_source(scheduled(g, {{"x", Tensor(DType::f64, {1, 16})}})).text;
  EXPECT_NE(src.find("#pragma OPENCL EXTENSION cl_khr_fp64 : enable"), std::string::npos) << src;
  EXPECT_NE(src.find("tanh("), std::string::npos) << src;
  NEED_OPENCL();
  if (!opencl::context(0).device.fp64) GTEST_SKIP() << "the OpenCL device has no fp64";
  EXPECT_FALSE(opencl::ClCompiler(opencl::context(0)).compile(src).empty());
}

TEST(OpenclCodegen, BuildOptionsNeverRelaxFloatMaths) {
  for (bool exact : {true, false}) {
    std::string o = opencl::build_options(exact);
    for (const char* never : {"fast", "mad", "unsafe", "finite", "denorms"}) EXPECT_EQ(o.find(never), std::string::npos) << o;
    EXPECT_EQ(o.find("-cl-fp32-correctly-rounded-divide-sqrt") != std::string::npos, exact) << o;
  }
}

TEST(OpenclCodegen, RejectionIsAnInternalErrorWithTheLog) {
  NEED_OPENCL();
  opencl::ClCompiler compiler(opencl::context(0));
  try {
    compiler.compile("__kernel void k0(__global float* b0) { b0[0] = undeclared_name(); }\n");
    FAIL() << "expected an InternalError";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("undeclared_name"), std::string::npos) << e.what();
  }
}

TEST(OpenclCodegen, IdentityNamesPlatformDeviceDriverAndOptions) {
  NEED_OPENCL();
  opencl::ClCompiler compiler(opencl::context(0));
  const opencl::DeviceInfo& d = opencl::context(0).device;
  std::string id = compiler.identity();
  for (const std::string& part : {d.platform_name, d.name, d.driver, opencl::build_options(d.correctly_rounded_divide_sqrt)})
    EXPECT_NE(id.find(part), std::string::npos) << part << " in " << id;
}

TEST(OpenclTarget, WithoutALoaderItSaysWhyAndRunsNothing) {
  CliResult info = shell("LOCKSTEP_OPENCL=/nonexistent/libOpenCL.so.1 " + shell_quote(testing::lockstep_binary()) +
                         " info --targets");
  EXPECT_EQ(info.status, 0) << info.err;
  EXPECT_NE(info.out.find("opencl: "), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("cannot run here: no OpenCL ICD loader: /nonexistent/libOpenCL.so.1"), std::string::npos)
      << info.out;
  CliResult run = shell("LOCKSTEP_OPENCL=/nonexistent/libOpenCL.so.1 " + shell_quote(testing::lockstep_binary()) +
                        " run " + shell_quote(model_file("g15")) + " --target opencl --seed-inputs vits");
  EXPECT_EQ(run.status, 2) << run.out << run.err;
  EXPECT_NE(run.err.find("no OpenCL ICD loader"), std::string::npos) << run.err;
  EXPECT_EQ(run.out.find("sha256="), std::string::npos) << run.out;
}

// Two OpenCL devices (PoCL's basic and pthread drivers side by side, POCL_DEVICES): check
// --device 1 gives its fresh processes --device=1, and their plan identity (which holds the
// device) must equal this process's, so a fresh process on device 0 would differ.
TEST(OpenclTarget, CheckOnDeviceOneRunsEveryFreshProcessThere) {
  NEED_OPENCL();
  if (opencl::context(0).device.platform_name.find("Portable Computing Language") == std::string::npos)
    GTEST_SKIP() << "needs PoCL for two devices on one machine";
  std::string env = "POCL_DEVICES='basic pthread' " + shell_quote(testing::lockstep_binary());
  std::string model = shell_quote(model_file("g15"));
  CliResult d0 = shell(env + " check " + model + " --targets opencl --seed-inputs vits --sha-only");
  CliResult d1 = shell(env + " check " + model + " --targets opencl --seed-inputs vits --sha-only --device 1");
  ASSERT_EQ(d0.status, 0) << d0.err;
  ASSERT_EQ(d1.status, 0) << d1.err;
  EXPECT_NE(d0.line("plan="), d1.line("plan=")) << "the identity names the device";
  EXPECT_EQ(d1.line("options="), "--device=1");
  CliResult c = shell(env + " check " + model + " --targets opencl --seed-inputs vits --device 1 --fresh 2 --repeat 1");
  EXPECT_EQ(c.status, 0) << c.out << c.err;
  EXPECT_NE(
      c.out.find("2 processes, one result, the same plan (" + d1.line("plan=").substr(0, 12) + ") with --device=1"),
      std::string::npos)
      << c.out;
}

TEST(OpenclTarget, AMissingDeviceIsExit2) {
  NEED_OPENCL();
  CliResult r = lockstep({"run", model_file("g15"), "--target", "opencl", "--device", "99", "--seed-inputs", "vits"});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("there is no opencl device 99"), std::string::npos) << r.err;
  CliResult info = lockstep({"info", "--targets"});
  EXPECT_NE(info.out.find("--device 0: " + opencl::context(0).device.platform_name), std::string::npos) << info.out;
}

// A target like opencl whose schedules ask for more work items per group than the device has.
TEST(OpenclLaunch, AGroupTooLargeForTheDeviceNamesTheKernelAndItsNodes) {
  NEED_OPENCL();
  TargetInfo wide = opencl::target_info();
  wide.name = "opencl-wide-groups";
  wide.desc.group_threads = wide.desc.max_group_threads = static_cast<int64_t>(opencl::context(0).device.max_group) * 2;
  if (!find_target(wide.name)) register_target(wide);
  Graph g = tanh_graph();
  try {
    compile(g, wide.name, {})->run({{"x", Tensor(DType::f32, {1, 64})}});
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("cannot be launched"), std::string::npos) << m;
    EXPECT_NE(m.find("the tanh"), std::string::npos) << m;
    EXPECT_NE(m.find("work items per group, the device allows"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace lockstep
