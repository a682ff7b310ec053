// The CUDA target without a GPU: every kernel generated for the test graphs goes through NVRTC
// (so a printer bug fails CI), the module cache is keyed by content and survives corruption,
// and launch checks and the device memory layout hold on hand-made limits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "backend/cuda/cuda_api.h"
#include "backend/cuda/cuda_codegen.h"
#include "backend/cuda/launch.h"
#include "backend/cuda/nvrtc_compiler.h"
#include "codegen/gpu_printer.h"
#include "core/error.h"
#include "core/process.h"
#include "frontend/onnx_import.h"
#include "graph/bind.h"
#include "harness.h"
#include "passes/pipeline.h"
#include "passes/schedule.h"
#include "runtime/device_layout.h"
#include "test_util.h"
#include "vits.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using lockstep::testing::plan_for;

#define NEED_NVRTC()                                                                  \
  do {                                                                                \
    std::string why;                                                                  \
    if (!cuda::nvrtc(&why)) GTEST_SKIP() << "CUDA codegen not checked: " << why;      \
  } while (0)

// Zero-filled inputs of the shapes a case declares (values do not change the kernels).
TensorMap zero_inputs(const OpCase& c, const Graph& g) {
  TensorMap feed;
  for (size_t k = 0; k < g.inputs.size(); ++k) feed[g.values[g.inputs[k]].name] = Tensor(c.inputs[k].dtype, c.inputs[k].shape);
  return feed;
}

// Schedules the plan for cuda and NVRTC-compiles its whole translation unit; returns its
// kernel count.
size_t compile_plan(kir::Plan p) {
  choose_schedules(p, cuda::target_desc());
  cuda::DeviceCode code = cuda::nvrtc_compile(cuda::program_source(p).text, cuda::default_compute_capability());
  EXPECT_FALSE(code.image.empty());
  return p.kernels.size();
}

TEST(CudaCodegen, EveryHarnessCaseCompilesWithNvrtc) {
  NEED_NVRTC();
  size_t kernels = 0, cases = 0, unsupported = 0;
  for (const OpCase& c : standard_cases()) {
    Graph g = build_case(c);
    try {
      kernels += compile_plan(plan_for(g, zero_inputs(c, g)));
      ++cases;
    } catch (const Unsupported& e) {
      ++unsupported;
    } catch (const std::exception& e) {
      ADD_FAILURE() << c.name << ": " << e.what();
    }
  }
  std::cout << "nvrtc: " << cases << " harness cases, " << kernels << " kernels compiled; " << unsupported
            << " unsupported\n";
  EXPECT_GT(cases, 50u);
}

TEST(CudaCodegen, VitsCut174CompilesWithNvrtc) {
  NEED_NVRTC();
  Graph g = vits::build_cut(vits::Config{}, {"/flow/flows.0/enc/in_layers.1/Conv"});
  ASSERT_EQ(g.nodes.size(), 174u);
  EXPECT_GT(compile_plan(plan_for(g, vits::seed_inputs(g, 1024))), 10u);
}

TEST(CudaCodegen, VitsDecoderCompilesWithNvrtc) {
  NEED_NVRTC();
  vits::Config c;
  c.part = vits::Part::decoder;
  c.dec.upsample_initial = 128;
  Graph g = vits::build(c);
  EXPECT_GT(compile_plan(plan_for(g, vits::seed_inputs(g, 1024))), 50u);
}

// The flow's coupling layers repeat: their kernels differ only in the buffers they take, and
// the program holds each such code once, under its first kernel's name, which every kernel
// that shares it runs (a kernel's parameters line up with its function's: the same schedule
// and, position by position, buffers of the same dtype and shape).
TEST(CudaCodegen, KernelsWithTheSameCodeShareOneFunction) {
  vits::Config c;
  c.part = vits::Part::decoder;
  c.dec.upsample_initial = 128;
  Graph g = vits::build(c);
  kir::Plan p = plan_for(g, vits::seed_inputs(g, 1024));
  choose_schedules(p, cuda::target_desc());
  codegen::ProgramSource program = cuda::program_source(p);
  const std::vector<std::string>& entries = program.entries;
  ASSERT_EQ(entries.size(), p.kernels.size());
  const std::string& src = program.text;
  std::map<std::string, size_t> index;
  for (size_t k = 0; k < p.kernels.size(); ++k) index[p.kernels[k].name] = k;
  size_t functions = 0;
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    const kir::Kernel& kern = p.kernels[k];
    size_t defined = 0;
    for (size_t at = src.find(" " + kern.name + "("); at != std::string::npos; at = src.find(" " + kern.name + "(", at + 1)) ++defined;
    if (entries[k] == kern.name) {
      ++functions;
      EXPECT_EQ(defined, 1u) << kern.name;
      continue;
    }
    EXPECT_EQ(defined, 0u) << kern.name << " runs " << entries[k] << " but has a function of its own";
    ASSERT_TRUE(index.count(entries[k])) << entries[k];
    const kir::Kernel& shared = p.kernels[index[entries[k]]];
    EXPECT_LT(index[entries[k]], k);
    EXPECT_EQ(shared.schedule.threads, kern.schedule.threads);
    EXPECT_EQ(shared.schedule.rows * shared.schedule.cols, kern.schedule.rows * kern.schedule.cols);
    std::vector<int> a = codegen::kernel_params(kern), b = codegen::kernel_params(shared);
    ASSERT_EQ(a.size(), b.size()) << kern.name;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(p.buffers[a[i]].dtype, p.buffers[b[i]].dtype) << kern.name << " parameter " << i;
      EXPECT_EQ(p.buffers[a[i]].shape, p.buffers[b[i]].shape) << kern.name << " parameter " << i;
    }
    EXPECT_NE(src.find("// " + kern.name + " (runs " + entries[k] + "): "), std::string::npos) << kern.name;
  }
  EXPECT_LT(functions, p.kernels.size() * 3 / 4) << "the flow's four coupling layers should share their kernels";
  EXPECT_GT(functions, 0u);
}

TEST(CudaCodegen, TorchExportedVitsAtT64CompilesWithNvrtc) {
  NEED_NVRTC();
  Graph g = load_onnx(LOCKSTEP_TEST_DATA "/torch/vits_small_ts.onnx");
  TensorMap in;
  for (int v : g.inputs) {
    const TypeInfo& t = g.values[v].type;
    Shape s;
    for (int64_t d : t.dims) s.push_back(d < 0 ? 64 : d);  // T = 64
    in[g.values[v].name] = Tensor(t.dtype, s);
  }
  EXPECT_GT(compile_plan(plan_for(g, in)), 10u);
}

TEST(CudaCodegen, FloatOptionsMatchTheCpuAndTargetTheDevice) {
  NEED_NVRTC();
  std::vector<std::string> o = cuda::nvrtc_options(90);
  auto has = [&](const std::string& s) { return std::find(o.begin(), o.end(), s) != o.end(); };
  EXPECT_TRUE(has("--gpu-architecture=sm_90"));
  EXPECT_TRUE(has("--fmad=false"));  // the CPU compiles with -ffp-contract=off
  EXPECT_TRUE(has("--prec-div=true"));
  EXPECT_TRUE(has("--ftz=false"));
  for (const std::string& s : o) EXPECT_EQ(s.find("fast"), std::string::npos) << s;
}

TEST(CudaCodegen, NvrtcRejectionIsAnErrorWithTheLog) {
  NEED_NVRTC();
  try {
    cuda::nvrtc_compile("extern \"C\" __global__ void k0() { undeclared_name(); }\n", 90);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("undeclared_name"), std::string::npos) << e.what();
  }
}

// Sets XDG_CACHE_HOME to a fresh folder for one test.

const char* kSrcA = "extern \"C\" __global__ void k0(float* b0) { b0[threadIdx.x] = 1.0f; }\n";

// The architecture, NVRTC's version and its options are the compiler's identity, so they are
// in the kernel cache's key (runtime/kernel_cache.h; its own tests: kernel_cache_test.cpp).
TEST(CudaCodegen, NvrtcIdentityNamesTheArchitecture) {
  NEED_NVRTC();
  cuda::NvrtcCompiler sm90(90), sm80(80);
  EXPECT_NE(sm90.identity(), sm80.identity());
  EXPECT_NE(sm90.identity().find("--fmad=false"), std::string::npos) << sm90.identity();
  EXPECT_EQ(cuda::unpack_images(sm90.compile(kSrcA)), std::vector<std::string>{cuda::nvrtc_compile(kSrcA, 90).image});
}

TEST(CudaCodegen, PackedImagesComeBackAsWrittenAndDamageIsAnError) {
  std::vector<std::string> images = {"abc", std::string("\0\n7\n", 4), "x"};
  std::string packed = cuda::pack_images(images);
  EXPECT_EQ(cuda::unpack_images(packed), images);
  for (const std::string& bad : {std::string(), std::string("a cubin"), packed.substr(0, packed.size() - 1),
                                 packed + "9\nab", cuda::pack_images({})}) {
    try {
      cuda::unpack_images(bad);
      ADD_FAILURE() << "accepted " << bad.size() << " bytes";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("damaged"), std::string::npos) << e.what();
    }
  }
}

// A program of many kernels is compiled as a translation unit a core (NVRTC translates PTX on
// one thread): each kernel is in exactly one image, the buffer table in the last.
TEST(CudaCodegen, ALargeProgramIsCompiledAsAUnitACore) {
  NEED_NVRTC();
  constexpr int kKernels = 40;
  std::string src = "typedef float real;\n";
  for (int k = 0; k < kKernels; ++k)
    src += std::string(codegen::kUnitBreak) + "extern \"C\" __global__ void kern" + std::to_string(k) +
           "(real* b) { b[threadIdx.x] = " + std::to_string(k) + ".0f; }\n";
  src += std::string(codegen::kUnitBreak) + "extern \"C\" __device__ int ls_buffer_count = 1;\n";
  std::vector<std::string> images = cuda::unpack_images(cuda::NvrtcCompiler(90).compile(src));
  size_t want = std::min<size_t>(static_cast<size_t>(available_cores()), kKernels / codegen::kPiecesPerUnit);
  EXPECT_EQ(images.size(), want);
  std::map<std::string, int> holders;
  for (const std::string& i : images)
    for (const std::string& n : cuda::entry_names(i)) ++holders[n];
  EXPECT_EQ(holders.size(), static_cast<size_t>(kKernels));
  for (int k = 0; k < kKernels; ++k) EXPECT_EQ(holders["kern" + std::to_string(k)], 1) << k;
  EXPECT_NE(images.back().find("ls_buffer_count"), std::string::npos);
  // A cubin cut short is reported, not read past its end.
  EXPECT_THROW(cuda::entry_names(images[0].substr(0, 100)), Error);
}

TEST(CudaCodegen, PtxEntriesAreNamed) {
  std::string ptx = ".version 8.0\n.visible .entry k4(\n.param .u64 p0\n)\n{ ret; }\n.visible .entry k12 (\n)\n{ ret; }\n";
  EXPECT_EQ(cuda::entry_names(ptx), (std::vector<std::string>{"k4", "k12"}));
}

kir::Kernel named_kernel() {
  kir::Kernel k;
  k.name = "k7";
  k.nodes = {"/dec/conv_pre/Conv", "/dec/LeakyRelu"};
  return k;
}

cuda::DeviceLimits h200_like() {
  cuda::DeviceLimits d;
  d.max_threads_per_block = 1024;
  d.max_shared_per_block = 49152;
  d.max_registers_per_block = 65536;
  d.max_grid_x = 2147483647;
  return d;
}

TEST(CudaLaunch, ViolationNamesTheKernelAndItsNodes) {
  cuda::FunctionLimits f{128, 0, 255, 0};  // the compiled function allows 128 threads
  cuda::LaunchShape s = cuda::launch_shape(10000, 256, h200_like());
  EXPECT_EQ(s.grid, 40u);
  try {
    cuda::validate_launch(named_kernel(), s, f, h200_like());
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("k7"), std::string::npos) << m;
    EXPECT_NE(m.find("/dec/conv_pre/Conv, /dec/LeakyRelu"), std::string::npos) << m;
    EXPECT_NE(m.find("256 threads per block"), std::string::npos) << m;
  }
}

TEST(CudaLaunch, SharedMemoryAndRegistersAreChecked) {
  cuda::LaunchShape s = cuda::launch_shape(1 << 20, 256, h200_like());
  EXPECT_NO_THROW(cuda::validate_launch(named_kernel(), s, {1024, 0, 64, 0}, h200_like()));
  EXPECT_THROW(cuda::validate_launch(named_kernel(), s, {1024, 49153, 32, 0}, h200_like()), Error);
  cuda::DeviceLimits small = h200_like();
  small.max_registers_per_block = 8192;  // 256 threads x 64 registers = 16384
  EXPECT_THROW(cuda::validate_launch(named_kernel(), s, {1024, 0, 64, 0}, small), Error);
  small = h200_like();
  small.max_threads_per_block = 128;
  EXPECT_THROW(cuda::validate_launch(named_kernel(), s, {1024, 0, 32, 0}, small), Error);
}

TEST(CudaLayout, CheckedRegionsAreAlignedGuardedAndDisjoint) {
  Graph g = vits::build_cut(vits::Config{}, {"/flow/flows.0/enc/res_skip_layers.0/Conv"});
  kir::Plan p = plan_for(g, vits::seed_inputs(g, 1024));
  MemoryPlan m = plan_memory(p);
  for (bool checked : {false, true}) {
    DeviceLayout l = layout_device_memory(p, m, checked, cuda::target_desc().buffer_align);
    EXPECT_EQ(l.guard, checked ? 4096 : 0);
    for (size_t a = 0; a < l.regions.size(); ++a) {
      const auto& r = l.regions[a];
      EXPECT_EQ(r.at % 256, 0) << r.what;
      EXPECT_GE(r.at - l.guard, 0);
      EXPECT_LE(r.at + r.bytes + l.guard, r.constant ? l.constant_total : l.total) << r.what;
      for (size_t b = a + 1; b < l.regions.size(); ++b) {
        const auto& o = l.regions[b];
        if (o.constant != r.constant) continue;  // two allocations
        EXPECT_TRUE(r.at + r.bytes + l.guard <= o.at - l.guard || o.at + o.bytes + l.guard <= r.at - l.guard)
            << r.what << " and " << o.what;
      }
    }
    for (size_t b = 0; b < p.buffers.size(); ++b)
      if (p.buffers[b].kind == kir::Buffer::Temp && m.offset[b] >= 0) {
        EXPECT_EQ(l.offset[b], l.arena_at + m.offset[b]);
      }
  }
}

}  // namespace
}  // namespace lockstep
