// The CUDA target on a device: hand-computed values, CUDA graphs against plain launches,
// per-group capture (the staging pool's tests run on every target: staging_test.cpp). Every test
// skips with the reason when this machine cannot run CUDA kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <thread>

#include "backend/cuda/cuda_api.h"
#include "backend/cuda/cuda_device.h"
#include "backend/registry.h"
#include "core/error.h"
#include "graph/builder.h"
#include "test_util.h"
#include "verify/parity.h"
#include "verify/planted_fault.h"
#include "vits.h"

namespace lockstep {
namespace {

#define NEED_DEVICE()                                                                      \
  do {                                                                                     \
    std::string why = testing::cannot_run("cuda");                                         \
    if (!why.empty()) GTEST_SKIP() << "CUDA execution not checked here: " << why;          \
  } while (0)

Tensor floats(const Shape& s, const std::vector<float>& v) {
  Tensor t(DType::f32, s);
  std::memcpy(t.bytes.data(), v.data(), v.size() * sizeof(float));
  return t;
}

using testing::values;

// float32 -> float16 -> float32 on the device; the expected halves are worked out by hand.
TEST(CudaRun, HalfRoundingIsIeeeNearestEven) {
  NEED_DEVICE();
  GraphBuilder b;
  int x = b.input("x", DType::f32, {dim(8)});
  int h = b.op("Cast", "to_half", {x}, {{"to", attr_int(static_cast<int64_t>(DType::f16))}});
  b.output(b.op("Cast", "to_float", {h}, {{"to", attr_int(static_cast<int64_t>(DType::f32))}}));
  Graph g = b.finish();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> in = {1.0f / 3, 65504.0f, 70000.0f, 1e-7f, -2.5f, 0.1f, 65519.0f, 2049.0f};
  // 1/3 -> 0x3555; 70000 and 65520+ overflow; 1e-7 is 1.68 half subnormals (2^-24) -> 2;
  // 0.1 -> 0x2E66; 2049 is a tie between 2048 and 2050 -> even mantissa 2048.
  std::vector<float> want = {0.333251953125f, 65504.0f, inf, 2 * std::ldexp(1.0f, -24), -2.5f, 0.0999755859375f,
                             65504.0f, 2048.0f};
  for (bool graph : {false, true}) {
    CompileOptions o;
    o.replay = graph;
    std::vector<float> got = values(compile(g, "cuda", o)->run({{"x", floats({8}, in)}})[0]);
    for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(got[k], want[k]) << "element " << k << " graph " << graph;
  }
}

// Sums of small integers are exact in float32 in any order; int64 beyond 2^32 checks 64-bit indexing of values.
TEST(CudaRun, ReductionAndInt64ArithmeticAreExact) {
  NEED_DEVICE();
  GraphBuilder b;
  int x = b.input("x", DType::f32, {dim(3), dim(4)});
  int i = b.input("i", DType::i64, {dim(3)});
  b.output(b.op("ReduceSum", "sum", {x, b.initializer("axes", [] {
                  Tensor t(DType::i64, {1});
                  t.data<int64_t>()[0] = 1;
                  return t;
                }())}, {{"keepdims", attr_int(0)}}));
  b.output(b.op("Abs", "abs", {b.op("Sub", "sub", {i, b.initializer("big", [] {
                  Tensor t(DType::i64, {1});
                  t.data<int64_t>()[0] = int64_t{1} << 40;
                  return t;
                }())})}));
  Graph g = b.finish();
  Tensor ti(DType::i64, {3});
  ti.data<int64_t>()[0] = 5;
  ti.data<int64_t>()[1] = (int64_t{1} << 40) + 7;
  ti.data<int64_t>()[2] = -3;
  std::vector<Tensor> out = compile(g, "cuda")->run(
      {{"x", floats({3, 4}, {1, 2, 3, 4, -1, -2, -3, -4, 100, 0.5f, 0.25f, 7})}, {"i", ti}});
  EXPECT_EQ(values(out[0]), (std::vector<float>{10, -10, 107.75f}));
  ASSERT_EQ(out[1].dtype, DType::i64);
  EXPECT_EQ(out[1].data<int64_t>()[0], (int64_t{1} << 40) - 5);
  EXPECT_EQ(out[1].data<int64_t>()[1], 7);
  EXPECT_EQ(out[1].data<int64_t>()[2], (int64_t{1} << 40) + 3);
}

vits::Config decoder128() {
  vits::Config c;
  c.part = vits::Part::decoder;
  c.dec.upsample_initial = 128;
  return c;
}

// The decoder at a short T: more than 200 weight tensors, quick to run.
struct SmallDecoder {
  Graph g = vits::build([] {
    vits::Config c = decoder128();
    c.T = 64;
    return c;
  }());
  TensorMap in = vits::seed_inputs(g, 64);
};

std::string sha_of_run(const Graph& g, const TensorMap& in, const CompileOptions& o) {
  return tensor_sha256(compile(g, "cuda", o)->run(in)[0]);
}

// kernel:NODE is planted by the shared pipeline, so cuda carries it like cpu: the output moves.
TEST(CudaFaults, KernelFaultChangesTheOutput) {
  NEED_DEVICE();
  SmallDecoder d;
  CompileOptions o;
  o.fault = plant_fault("kernel:/dec/conv_pre/Conv");
  EXPECT_NE(sha_of_run(d.g, d.in, o), sha_of_run(d.g, d.in, CompileOptions{}));
}

TEST(CudaGraph, ReplayGivesTheSameBytesAsPlainLaunches) {
  NEED_DEVICE();
  SmallDecoder d;
  CompileOptions plain, graph, checked;
  plain.replay = false;
  checked.checked = true;  // poisoning and guards go into the captured graph too
  auto p = compile(d.g, "cuda", graph);
  std::string first = tensor_sha256(p->run(d.in)[0]);
  EXPECT_EQ(tensor_sha256(p->run(d.in)[0]), first);  // replayed, not re-captured
  EXPECT_EQ(sha_of_run(d.g, d.in, plain), first);
  EXPECT_EQ(sha_of_run(d.g, d.in, checked), first);
  // New input values through the same captured graph read the new inputs.
  TensorMap other = d.in;
  Tensor& z = other.at("z_p");
  for (int64_t k = 0; k < z.numel(); ++k) z.data<float>()[k] *= -0.5f;
  std::string replayed = tensor_sha256(p->run(other)[0]);
  EXPECT_NE(replayed, first);
  EXPECT_EQ(sha_of_run(d.g, other, plain), replayed);
}

TEST(CudaCapture, LastGroupIsTheOutput) {
  NEED_DEVICE();
  SmallDecoder d;
  auto p = compile(d.g, "cuda");
  std::vector<Tensor> out = p->run(d.in);
  std::vector<Program::GroupValue> groups = p->run_capture(d.in);
  ASSERT_GT(groups.size(), 50u);
  EXPECT_EQ(tensor_sha256(groups.back().data), tensor_sha256(out[0]));
  EXPECT_FALSE(groups.back().nodes.empty());
}

// The device makes its context current wherever a run may start: a program compiled and run on
// one thread runs again, with no new compile, on a thread that never touched CUDA.
TEST(CudaRun, AProgramPreparedOnOneThreadRunsOnAnother) {
  NEED_DEVICE();
  SmallDecoder d;
  auto p = compile(d.g, "cuda");
  std::string want = tensor_sha256(p->run(d.in)[0]);
  std::string got, error;
  std::thread other([&] {
    try {
      got = tensor_sha256(p->run(d.in)[0]);
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  other.join();
  EXPECT_EQ(error, "");
  EXPECT_EQ(got, want);
}

TEST(CudaTarget, WithoutADeviceRunSaysWhy) {
  std::string why;
  if (!cuda::nvrtc(&why)) GTEST_SKIP() << "NVRTC not loadable: " << why;
  if (cuda::Gpu::get()) GTEST_SKIP() << "a CUDA device is present; the no-device message is not shown";
  SmallDecoder d;
  auto p = compile(d.g, "cuda");
  p->prepare(d.in);  // NVRTC alone compiles
  EXPECT_GT(p->sources().size(), 50u);
  try {
    p->run(d.in);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot run here"), std::string::npos) << e.what();
  }
  // A run without a prepare stops before NVRTC: the device opened alongside is known missing by then.
  CompileOptions o;
  o.use_cache = false;
  auto q = compile(d.g, "cuda", o);
  try {
    q->run(d.in);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot run here"), std::string::npos) << e.what();
  }
  for (const auto& [phase, ms] : q->stats().phases_ms) EXPECT_NE(phase, "native");
}

}  // namespace
}  // namespace lockstep
