// Every compiled target on the VITS family (the 170/174-node cuts, the full flow, the
// 128-channel decoder, the 192-channel flow at a symbolic T) against the float64 reference,
// and byte-identical across compiles, cache modes, A-B-A sequences and fresh processes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "backend/registry.h"
#include "frontend/onnx_export.h"
#include "test_util.h"
#include "verify/parity.h"
#include "vits.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

const std::string kCut174 = "/flow/flows.0/enc/in_layers.1/Conv";
const std::string kCut170 = "/flow/flows.0/enc/res_skip_layers.0/Conv";
constexpr int64_t kFrames = 1024;

LOCKSTEP_ON_EACH_TARGET(Vits);

Graph cut(const std::string& at) { return vits::build_cut(vits::Config{}, {at}); }

std::vector<Tensor> run_on(const std::string& target, const Graph& g, const TensorMap& in, CompileOptions o = {}) {
  return compile(g, target, o)->run(in);
}

void expect_agrees(const Graph& g, const TensorMap& in, const std::vector<Tensor>& outs, const std::string& what) {
  std::vector<Agreement> a = agreement_with_ref(g, in, outs);
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_TRUE(agrees(a[k])) << what << " output " << k << ": " << describe(a[k]);
    std::printf("%s output %zu: %s\n", what.c_str(), k, describe(a[k]).c_str());
  }
}

TEST_P(Vits, Cut170And174AgreeWithRef) {
  for (const std::string& at : {kCut170, kCut174}) {
    Graph g = cut(at);
    TensorMap in = vits::seed_inputs(g, kFrames);
    expect_agrees(g, in, run_on(GetParam(), g, in), at);
  }
}

TEST_P(Vits, FullFlowAgreesWithRef) {
  Graph g = vits::build(vits::Config{});
  TensorMap in = vits::seed_inputs(g, kFrames);
  expect_agrees(g, in, run_on(GetParam(), g, in), "flow");
}

TEST_P(Vits, Decoder128AgreesWithRef) {
  // The simulator runs each GPU thread in turn: minutes for 400 kernels at 1024 frames.
  if (GetParam() == "metal-sim") SKIP_UNLESS_FULL("the 128-channel decoder on the simulator");
  vits::Config c;
  c.part = vits::Part::decoder;
  c.dec.upsample_initial = 128;
  Graph g = vits::build(c);
  TensorMap in = vits::seed_inputs(g, kFrames);
  CompileOptions o;
  o.threads = 2;
  o.checked = true;  // planner proof, sentinels and poisoned dead memory on a 400-kernel plan
  expect_agrees(g, in, run_on(GetParam(), g, in, o), "decoder-128");
}

// 192 channels, symbolic T run at 173 frames with the second half of the mask zero.
TEST_P(Vits, Wide192SymbolicTHalfMaskAgreesWithRef) {
  vits::Config c;
  c.flow.channels = 192;
  c.flow.hidden = 192;
  c.T = -1;
  Graph g = vits::build(c);
  TensorMap in = vits::seed_inputs(g, 173);
  Tensor& mask = in.at("y_mask");
  for (int64_t t = 173 / 2; t < 173; ++t) mask.data<float>()[t] = 0.0f;
  expect_agrees(g, in, run_on(GetParam(), g, in), "flow-192 T=173 half mask");
}

TEST_P(Vits, BytesIdenticalAcrossCompilesAndCacheModes) {
  Graph g = cut(kCut174);
  TensorMap in = vits::seed_inputs(g, kFrames);
  std::string want = tensor_sha256(run_on(GetParam(), g, in)[0]);
  int repeats = testing::full_sweep() ? 4 : 1;  // the default tier: one compile per cache mode
  for (bool cache : {true, false})
    for (int k = 0; k < repeats; ++k) {
      CompileOptions o;
      o.use_cache = cache;
      EXPECT_EQ(tensor_sha256(run_on(GetParam(), g, in, o)[0]), want) << "compile " << k << " cache " << cache;
    }
}

TEST_P(Vits, CompileACompileBCompileAGivesTheSameA) {
  Graph a = cut(kCut170), b = cut(kCut174);
  TensorMap ia = vits::seed_inputs(a, kFrames), ib = vits::seed_inputs(b, kFrames);
  for (bool cache : {true, false}) {
    CompileOptions o;
    o.use_cache = cache;
    std::string first = tensor_sha256(run_on(GetParam(), a, ia, o)[0]);
    std::string mid = tensor_sha256(run_on(GetParam(), b, ib, o)[0]);
    EXPECT_NE(first, mid);
    EXPECT_EQ(tensor_sha256(run_on(GetParam(), a, ia, o)[0]), first) << "cache " << cache;
  }
}

std::string sha_from_cli(const std::string& model, const std::string& target, const std::string& extra) {
  std::string cmd = testing::lockstep_binary() + " run '" + model + "' --target " + target + " --seed-inputs vits " + extra;
  FILE* f = popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, f)) out += buf;
  EXPECT_EQ(pclose(f), 0) << cmd;
  auto at = out.find("sha256=");
  return at == std::string::npos ? "missing: " + out : out.substr(at + 7, 64);
}

// Whether a fresh lockstep process has this target (one a test registers lives in its process).
bool cli_has_target(const std::string& target) {
  FILE* f = popen((testing::lockstep_binary() + " info --targets").c_str(), "r");
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, f)) out += buf;
  pclose(f);
  return out.find("\n" + target + ": ") != std::string::npos || out.rfind(target + ": ", 0) == 0;
}

TEST_P(Vits, BytesIdenticalAcrossFreshProcesses) {
  if (!cli_has_target(GetParam())) GTEST_SKIP() << GetParam() << " is registered by this test process only";
  fs::path dir = fs::temp_directory_path() / ("lockstep-fresh-" + testing::param_name(GetParam()) + "-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string model = (dir / "vits174.onnx").string();
  save_onnx(cut(kCut174), model);
  Graph g = cut(kCut174);
  std::string in_process = tensor_sha256(run_on(GetParam(), g, vits::seed_inputs(g, kFrames))[0]);
  std::string want = sha_from_cli(model, GetParam(), "");
  EXPECT_EQ(want, in_process);
  int processes = testing::full_sweep() ? 4 : 2;  // the default tier: one per cache mode
  for (int k = 0; k < processes; ++k)
    EXPECT_EQ(sha_from_cli(model, GetParam(), k % 2 ? "--no-cache" : ""), want) << "process " << k;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lockstep
