// The CPU target on the VITS family against the float64 reference, across pass limits, and
// byte-identical across compiles, caches and processes.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "frontend/onnx_export.h"
#include "test_util.h"
#include "verify/parity.h"
#include "vits.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

const std::string kCut174 = "/flow/flows.0/enc/in_layers.1/Conv";
const std::string kCut170 = "/flow/flows.0/enc/res_skip_layers.0/Conv";

vits::Config flow_config() { return vits::Config{}; }

Graph cut(const std::string& at) { return vits::build_cut(flow_config(), {at}); }

std::vector<Tensor> run_cpu(const Graph& g, const TensorMap& in, CompileOptions o = {}) {
  return compile(g, "cpu", o)->run(in);
}

void expect_agrees(const Graph& g, const TensorMap& in, const std::vector<Tensor>& outs, const std::string& what) {
  std::vector<Agreement> a = agreement_with_ref(g, in, outs);
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_TRUE(agrees(a[k])) << what << " output " << k << ": " << describe(a[k]);
    std::printf("%s output %zu: %s\n", what.c_str(), k, describe(a[k]).c_str());
  }
}

TensorMap seed_inputs(const Graph& g, int64_t frames) { return vits::seed_inputs(g, frames); }

TEST(CpuVits, Cut170And174AgreeWithRef) {
  for (const std::string& at : {kCut170, kCut174}) {
    Graph g = cut(at);
    TensorMap in = seed_inputs(g, 1024);
    expect_agrees(g, in, run_cpu(g, in), at);
  }
}

TEST(CpuVits, FullFlowAgreesWithRef) {
  Graph g = vits::build(flow_config());
  TensorMap in = seed_inputs(g, 1024);
  expect_agrees(g, in, run_cpu(g, in), "flow");
}

TEST(CpuVits, Decoder128AgreesWithRef) {
  vits::Config c;
  c.part = vits::Part::decoder;
  c.dec.upsample_initial = 128;
  Graph g = vits::build(c);
  TensorMap in = seed_inputs(g, 1024);
  CompileOptions o;
  o.threads = 2;
  o.checked = true;  // planner proof, sentinels and poisoned dead memory on a 400-kernel plan
  expect_agrees(g, in, run_cpu(g, in, o), "decoder-128");
}

// 192 channels, symbolic T run at 173 frames with the second half of the mask zero.
TEST(CpuVits, Wide192SymbolicTHalfMaskAgreesWithRef) {
  vits::Config c;
  c.flow.channels = 192;
  c.flow.hidden = 192;
  c.T = -1;
  Graph g = vits::build(c);
  TensorMap in = seed_inputs(g, 173);
  Tensor& mask = in.at("y_mask");
  for (int64_t t = 173 / 2; t < 173; ++t) mask.data<float>()[t] = 0.0f;
  expect_agrees(g, in, run_cpu(g, in), "flow-192 T=173 half mask");
}

// Every prefix of the pass pipeline is a correct program. CI walks a sample
// (LOCKSTEP_SWEEP=full walks every N).
TEST(CpuVits, EveryPassLimitAgreesOn174) {
  Graph g = cut(kCut174);
  TensorMap in = seed_inputs(g, 1024);
  auto full = compile(g, "cpu");
  std::string want = tensor_sha256(full->run(in)[0]);
  int total = static_cast<int>(full->pass_log().size());
  ASSERT_GT(total, 50);
  std::set<int> limits;
  const char* sweep = std::getenv("LOCKSTEP_SWEEP");
  bool all = sweep && std::string(sweep) == "full";
  for (int n = 0; n <= total; ++n)
    if (all || n <= 2 || n >= total - 2 || n % (total / 8) == 0) limits.insert(n);
  for (int n : limits) {
    CompileOptions o;
    o.pass_limit = n;
    o.verify_each = true;
    std::vector<Tensor> outs = run_cpu(g, in, o);
    expect_agrees(g, in, outs, "pass-limit " + std::to_string(n));
    // Fusion regroups the same float32 operations, so every prefix gives the same bytes.
    EXPECT_EQ(tensor_sha256(outs[0]), want) << "pass-limit " << n;
  }
  std::printf("walked %zu of %d pass limits\n", limits.size(), total + 1);
}

TEST(CpuVits, BytesIdenticalAcrossCompilesAndCacheModes) {
  Graph g = cut(kCut174);
  TensorMap in = seed_inputs(g, 1024);
  std::string want = tensor_sha256(run_cpu(g, in)[0]);
  for (bool cache : {true, false})
    for (int k = 0; k < 8; ++k) {
      CompileOptions o;
      o.use_cache = cache;
      EXPECT_EQ(tensor_sha256(run_cpu(g, in, o)[0]), want) << "compile " << k << " cache " << cache;
    }
}

TEST(CpuVits, CompileACompileBCompileAGivesTheSameA) {
  Graph a = cut(kCut170), b = cut(kCut174);
  TensorMap ia = seed_inputs(a, 1024), ib = seed_inputs(b, 1024);
  for (bool cache : {true, false}) {
    CompileOptions o;
    o.use_cache = cache;
    std::string first = tensor_sha256(run_cpu(a, ia, o)[0]);
    std::string mid = tensor_sha256(run_cpu(b, ib, o)[0]);
    EXPECT_NE(first, mid);
    EXPECT_EQ(tensor_sha256(run_cpu(a, ia, o)[0]), first) << "cache " << cache;
  }
}

std::string sha_from_cli(const std::string& model, const std::string& extra) {
  std::string cmd = lockstep::testing::lockstep_binary() + " run '" + model + "' --target cpu --seed-inputs vits " + extra;
  FILE* f = popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, f)) out += buf;
  EXPECT_EQ(pclose(f), 0) << cmd;
  auto at = out.find("sha256=");
  return at == std::string::npos ? "missing: " + out : out.substr(at + 7, 64);
}

TEST(CpuVits, BytesIdenticalAcrossFreshProcesses) {
  fs::path dir = fs::temp_directory_path() / ("lockstep-fresh-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string model = (dir / "vits174.onnx").string();
  save_onnx(cut(kCut174), model);
  std::string want = sha_from_cli(model, "");
  for (int k = 0; k < 8; ++k) EXPECT_EQ(sha_from_cli(model, k % 2 ? "--no-cache" : ""), want) << "process " << k;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lockstep
