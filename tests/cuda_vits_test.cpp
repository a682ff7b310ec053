// The CUDA target on the VITS family: agreement with the float64 reference and with the CPU,
// and identical bytes across compiles in one process, fresh processes and A-B-A sequences;
// the small PyTorch-exported model against PyTorch's own float64 output.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "backend/registry.h"
#include "frontend/npy.h"
#include "frontend/onnx_export.h"
#include "frontend/onnx_import.h"
#include "ref/interpreter.h"
#include "test_util.h"
#include "verify/parity.h"
#include "vits.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

#define NEED_DEVICE()                                                             \
  do {                                                                            \
    std::string why = testing::cannot_run("cuda");                                     \
    if (!why.empty()) GTEST_SKIP() << "CUDA execution not checked here: " << why; \
  } while (0)

const std::string kCut174 = "/flow/flows.0/enc/in_layers.1/Conv";
const std::string kCut170 = "/flow/flows.0/enc/res_skip_layers.0/Conv";

struct VitsCase {
  std::string name;
  Graph g;
  TensorMap in;
};

VitsCase make_case(const std::string& name) {
  vits::Config c;
  int64_t frames = 1024;
  if (name == "cut170" || name == "cut174") {
    Graph g = vits::build_cut(c, {name == "cut170" ? kCut170 : kCut174});
    TensorMap in = vits::seed_inputs(g, frames);
    return {name, std::move(g), std::move(in)};
  }
  if (name == "decoder128") {
    c.part = vits::Part::decoder;
    c.dec.upsample_initial = 128;
  } else if (name == "flow192_T173_halfmask") {
    c.flow.channels = c.flow.hidden = 192;
    c.T = -1;
    frames = 173;
  }
  Graph g = vits::build(c);
  TensorMap in = vits::seed_inputs(g, frames);
  if (frames == 173)
    for (int64_t t = 173 / 2; t < 173; ++t) in.at("y_mask").data<float>()[t] = 0.0f;
  return {name, std::move(g), std::move(in)};
}

const VitsCase& vits_case(const std::string& name) {
  static std::map<std::string, VitsCase> cases;
  auto it = cases.find(name);
  if (it == cases.end()) it = cases.emplace(name, make_case(name)).first;
  return it->second;
}

// The reference is slow on the decoder: computed once per process.
const std::vector<RefTensor>& reference(const VitsCase& c) {
  static std::map<std::string, std::vector<RefTensor>> memo;
  auto it = memo.find(c.name);
  if (it == memo.end()) it = memo.emplace(c.name, run_reference(c.g, c.in)).first;
  return it->second;
}

// In-process SHA-256 of the first output, for the fresh-process comparison.
std::map<std::string, std::string>& in_process_sha() {
  static std::map<std::string, std::string> m;
  return m;
}

std::vector<Tensor> run_cuda(const VitsCase& c, CompileOptions o = {}) { return compile(c.g, "cuda", o)->run(c.in); }

class CudaVits : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaVits, AgreesWithRefAndCpu) {
  NEED_DEVICE();
  const VitsCase& c = vits_case(GetParam());
  std::vector<Tensor> gpu = run_cuda(c);
  std::vector<Tensor> cpu = compile(c.g, "cpu")->run(c.in);
  const std::vector<RefTensor>& ref = reference(c);
  ASSERT_EQ(gpu.size(), ref.size());
  for (size_t k = 0; k < gpu.size(); ++k) {
    Agreement with_ref = compare(to_ref(gpu[k]), ref[k]);
    Agreement with_cpu = compare(to_ref(gpu[k]), to_ref(cpu[k]));
    Agreement cpu_ref = compare(to_ref(cpu[k]), ref[k]);
    EXPECT_TRUE(agrees(with_ref)) << c.name << " cuda vs ref: " << describe(with_ref);
    EXPECT_TRUE(agrees(with_cpu)) << c.name << " cuda vs cpu: " << describe(with_cpu);
    EXPECT_EQ(with_ref.nonfinite_mismatches, 0);
    std::printf("%s output %zu: cuda vs ref %s\n%s output %zu: cuda vs cpu %s\n%s output %zu: cpu vs ref %s\n",
                c.name.c_str(), k, describe(with_ref).c_str(), c.name.c_str(), k, describe(with_cpu).c_str(),
                c.name.c_str(), k, describe(cpu_ref).c_str());
    std::printf("%s output %zu sha256 cuda %s cpu %s\n", c.name.c_str(), k, tensor_sha256(gpu[k]).c_str(),
                tensor_sha256(cpu[k]).c_str());
  }
}

TEST_P(CudaVits, EightCompilesInOneProcessGiveIdenticalBytes) {
  NEED_DEVICE();
  const VitsCase& c = vits_case(GetParam());
  std::string want = tensor_sha256(run_cuda(c)[0]);
  for (int k = 0; k < 8; ++k) {
    CompileOptions o;
    o.use_cache = k != 1;  // once with NVRTC anew, bypassing both caches
    o.replay = k % 4 < 2;
    EXPECT_EQ(tensor_sha256(run_cuda(c, o)[0]), want) << c.name << " compile " << k;
  }
  in_process_sha()[c.name] = want;
  std::printf("%s: 8 compiles in one process, sha256 %s\n", c.name.c_str(), want.c_str());
}

std::string sha_from_cli(const std::string& args) {
  std::string cmd = lockstep::testing::lockstep_binary() + " run " + args + " --target cuda 2>&1";
  FILE* f = popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, f)) out += buf;
  EXPECT_EQ(pclose(f), 0) << cmd << "\n" << out;
  auto at = out.find("sha256=");
  return at == std::string::npos ? "missing: " + out : out.substr(at + 7, 64);
}

TEST_P(CudaVits, EightFreshProcessesGiveTheInProcessBytes) {
  NEED_DEVICE();
  const VitsCase& c = vits_case(GetParam());
  if (!in_process_sha().count(c.name)) in_process_sha()[c.name] = tensor_sha256(run_cuda(c)[0]);
  fs::path dir = fs::temp_directory_path() / ("lockstep-cuda-fresh-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string args = "'" + (dir / (c.name + ".onnx")).string() + "'";
  save_onnx(c.g, (dir / (c.name + ".onnx")).string());
  for (const auto& [name, t] : c.in) {
    std::string file = (dir / (c.name + "_" + name + ".npy")).string();
    write_npy(file, t);
    args += " --input '" + name + "=" + file + "'";
  }
  for (int k = 0; k < 8; ++k)
    EXPECT_EQ(sha_from_cli(args + (k % 2 ? " --no-cache" : "") + (k % 4 >= 2 ? " --no-replay" : "")),
              in_process_sha()[c.name])
        << c.name << " process " << k;
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Seed, CudaVits,
                         ::testing::Values("cut170", "cut174", "flow", "decoder128", "flow192_T173_halfmask"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// Not a speed target (a later issue): the figure for the record, and replays that stay exact.
TEST(CudaVitsTiming, DecoderRunTime) {
  NEED_DEVICE();
  const VitsCase& c = vits_case("decoder128");
  using clock = std::chrono::steady_clock;
  auto ms = [](clock::time_point a) { return std::chrono::duration<double, std::milli>(clock::now() - a).count(); };
  std::string want;
  double per_run[2] = {0, 0};
  for (bool graph : {true, false}) {
    CompileOptions o;
    o.replay = graph;
    auto p = compile(c.g, "cuda", o);
    auto t = clock::now();
    p->prepare(c.in);
    double prepare_ms = ms(t);
    std::string first = tensor_sha256(p->run(c.in)[0]);  // captures the graph
    if (want.empty()) want = first;
    EXPECT_EQ(first, want);
    t = clock::now();
    for (int k = 0; k < 10; ++k) EXPECT_EQ(tensor_sha256(p->run(c.in)[0]), want);
    per_run[graph ? 0 : 1] = ms(t) / 10;
    std::printf("decoder128 prepare (%s): %.0f ms\n", graph ? "graph" : "plain", prepare_ms);
  }
  std::printf("decoder128 per run (inputs up, outputs back): graph %.2f ms, plain launches %.2f ms\n", per_run[0],
              per_run[1]);
}

TEST(CudaVitsSequence, CompileACompileBCompileAGivesTheSameA) {
  NEED_DEVICE();
  const VitsCase& a = vits_case("cut170");
  const VitsCase& b = vits_case("cut174");
  for (bool cache : {true, false}) {
    CompileOptions o;
    o.use_cache = cache;
    std::string first = tensor_sha256(run_cuda(a, o)[0]);
    std::string mid = tensor_sha256(run_cuda(b, o)[0]);
    EXPECT_NE(first, mid);
    EXPECT_EQ(tensor_sha256(run_cuda(a, o)[0]), first) << "cache " << cache;
    // And with both programs alive at once, the first one run again after the second.
    auto pa = compile(a.g, "cuda", o);
    auto pb = compile(b.g, "cuda", o);
    EXPECT_EQ(tensor_sha256(pa->run(a.in)[0]), first);
    EXPECT_EQ(tensor_sha256(pb->run(b.in)[0]), mid);
    EXPECT_EQ(tensor_sha256(pa->run(a.in)[0]), first);
    std::printf("A-B-A cache %d: A %s B %s\n", cache, first.c_str(), mid.c_str());
  }
}

// PyTorch float64 on the small exported model (tests/data/torch): an independent reference.
TEST(CudaVitsTorch, SmallExportedModelMatchesPyTorchFloat64) {
  NEED_DEVICE();
  const std::string dir = std::string(LOCKSTEP_TEST_DATA) + "/torch/";
  for (const char* exporter : {"ts", "dynamo"})
    for (const char* inputs : {"sine64", "halfmask37"}) {
      Graph g = load_onnx(dir + "vits_small_" + exporter + ".onnx");
      TensorMap feeds;
      for (const char* name : {"z_p", "y_mask"}) feeds[name] = read_npy(dir + inputs + "_" + name + ".npy");
      std::vector<Tensor> outs = compile(g, "cuda")->run(feeds);
      for (size_t k = 0; k < outs.size(); ++k) {
        const std::string& name = g.values[g.outputs[k]].name;
        Agreement a = compare(to_ref(outs[k]), to_ref(read_npy(dir + inputs + "_torch_f64_" + name + ".npy")));
        EXPECT_LE(a.rel_l2, 1e-5) << exporter << " " << inputs << " " << name << ": " << describe(a);
        EXPECT_TRUE(agrees(a)) << exporter << " " << inputs << " " << name;
      }
    }
}

}  // namespace
}  // namespace lockstep
