// The metal targets beyond the per-target suites: the MSL they print, Metal's limits as clear
// errors, the simulated device's checks (threadgroup size, bindings, guarded accesses, macOS
// blit rules, barriers, poisoned staging buffers), and the reported staging race reproduced on
// metal-sim and localised by bisect.
#include <gtest/gtest.h>

#include <cstring>
#include <iostream>
#include <set>

#include "backend/metal/metal_api.h"
#include "backend/metal/metal_codegen.h"
#include "backend/metal/metal_target.h"
#include "backend/metal/sim/sim_driver.h"
#include "backend/registry.h"
#include "graph/builder.h"
#include "passes/schedule.h"
#include "ref/interpreter.h"
#include "runtime/target.h"
#include "test_util.h"
#include "verify/conformance.h"
#include "verify/parity.h"
#include "verify_cli.h"

namespace lockstep {
namespace {

using namespace verify_test;
using testing::error_of;
using testing::plan_for;

const char* kSim = "metal-sim";

Graph tanh_graph(DType t = DType::f32) {
  GraphBuilder b;
  int x = b.input("x", t, {dim(1), dim(64)});
  b.output(b.op("Tanh", "the tanh", {x}));
  return b.finish();
}

// y = x0 + x1 + ... as a chain of Adds, or a Concat of the inputs.
Graph many_inputs(int n, bool concat) {
  GraphBuilder b;
  std::vector<int> xs;
  for (int k = 0; k < n; ++k) xs.push_back(b.input("x" + std::to_string(k), DType::f32, {dim(1), dim(4)}));
  if (concat) {
    b.output(b.op("Concat", "the concat", xs, {{"axis", attr_int(1)}}));
  } else {
    int y = xs[0];
    for (int k = 1; k < n; ++k) y = b.op("Add", "add" + std::to_string(k), {y, xs[k]});
    b.output(y);
  }
  return b.finish();
}

TensorMap ramp_inputs(const Graph& g) {
  TensorMap in;
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    const Value& v = g.values[g.inputs[k]];
    Tensor t(DType::f32, {1, 4});
    for (int i = 0; i < 4; ++i) t.data<float>()[i] = static_cast<float>(k) + 0.25f * static_cast<float>(i);
    in[v.name] = t;
  }
  return in;
}

TEST(MetalCodegen, PrintsKernelsWithBufferSlotsAndNoDouble) {
  Graph g = tanh_graph();
  kir::Plan p = plan_for(g, {{"x", Tensor(DType::f32, {1, 64})}});
  choose_schedules(p, metal::target_desc());
  std::string src = metal::program_source(p).text;
  for (const char* want : {"#include <metal_stdlib>", "using namespace metal;", "kernel void k", "device float*",
                           "device const float*", "[[buffer(0)]]", "[[buffer(1)]]", "[[thread_position_in_threadgroup]]",
                           "ls_tanh(", "// k0: the tanh",
                           "kernel void ls_plan_info(device int64_t* out [[buffer(0)]], constant int64_t& room [[buffer(1)]])"})
    EXPECT_NE(src.find(want), std::string::npos) << want << "\n" << src;
  for (const char* never : {"double", "restrict", "__global", "extern \"C\"", "long long", "LL)"})
    EXPECT_EQ(src.find(never), std::string::npos) << never << "\n" << src;
  // metal-sim builds exactly the text metal would.
  EXPECT_EQ(find_target(kSim)->program_source(p).text, src);
}

// MSL has no double: a graph that computes in f64 is rewritten or refused before code exists.
TEST(MetalCodegen, F64IsNeverPrinted) {
  Graph g = tanh_graph(DType::f64);
  std::string err = error_of([&] { compile(g, kSim)->run({{"x", Tensor(DType::f64, {1, 64})}}); });
  std::printf("f64 Tanh on metal-sim: %s\n", err.empty() ? "rewritten to f32 compute" : err.c_str());
  if (!err.empty()) {
    EXPECT_NE(err.find("f64"), std::string::npos) << err;
    return;
  }
  auto p = compile(g, kSim);
  p->prepare({{"x", Tensor(DType::f64, {1, 64})}});
  for (const auto& [name, text] : p->sources()) EXPECT_EQ(text.find("double"), std::string::npos) << name;
}

// Metal's argument table has 31 buffer slots. Kernels that would take more are not made:
// fusion stops short of the limit and a node reading more tensors (a Concat of 70) is
// split into parts computed apart, with the same arithmetic in the same order, so metal-sim
// gives ref's values and cpu's bits. The sim bounds-checks every access, so a part evaluated
// outside the select that guards it would be an error here.
TEST(MetalCodegen, KernelsOver31BuffersAreSplitAndGiveTheSameBits) {
  for (const char* how : {"concat", "add chain"}) {
    Graph g = many_inputs(70, how[0] == 'c');
    TensorMap in = ramp_inputs(g);
    kir::Plan p = plan_for(g, in);
    choose_schedules(p, metal::target_desc());
    EXPECT_GE(p.kernels.size(), 3u) << how;
    for (const kir::Kernel& k : p.kernels)
      EXPECT_LE(kir::kernel_inputs(k).size() + 1, 31u) << how << ": " << kir::describe(p, k);
    std::string src = metal::program_source(p).text;
    EXPECT_EQ(src.find("[[buffer(31)]]"), std::string::npos) << how;
    std::vector<RefTensor> ref = run_reference(g, in);
    std::vector<Tensor> sim = compile(g, kSim)->run(in);
    ASSERT_EQ(sim[0].numel(), ref[0].numel()) << how;
    for (int64_t i = 0; i < ref[0].numel(); ++i)  // ramps of quarters: every sum is exact in f32
      EXPECT_EQ(sim[0].data<float>()[i], ref[0].f[static_cast<size_t>(i)]) << how << " " << i;
    EXPECT_EQ(tensor_sha256(sim[0]), tensor_sha256(compile(g, "cpu")->run(in)[0])) << how;
  }
}

// ONNX's conformance cases on the metal targets (which skip the per-target suite for this):
// every case the reference supports passes, but those that compute in f64, which Metal lacks
// and the compiler refuses naming the node and the type.
TEST(MetalConformance, EverySupportedCasePassesButThoseNeedingF64) {
  std::set<std::string> f64 = {"test_flexattention_double_expanded_ver26",
                               "test_pow_types_int32_float32",
                               "test_pow_types_int64_float32",
                               "test_max_float64",
                               "test_min_float64",
                               "test_mod_mixed_sign_float64",
                               "test_eyelike_with_dtype"};
  for (const char* k : {"default_axes_keepdims", "do_not_keepdims", "keepdims", "negative_axes_keepdims"})
    for (const char* data : {"example", "random"})  // onnx 1.12 writes these in float64
      f64.insert(std::string("test_reduce_log_sum_exp_") + k + "_" + data);
  for (const char* c :
       {"1d", "1d_exclusive", "1d_reverse", "1d_reverse_exclusive", "2d_axis_0", "2d_axis_1", "2d_negative_axis"})
    f64.insert(std::string("test_cumsum_") + c);  // onnx 1.12 writes these in float64 too
  for (const char* c : {"DOUBLE_to_FLOAT", "DOUBLE_to_FLOAT16", "FLOAT16_to_DOUBLE", "FLOAT_to_DOUBLE"})
    f64.insert(std::string("test_castlike_") + c);
  for (const char* c : {"batch_diagonal", "batch_matmul", "inner_prod", "sum", "transpose"})
    f64.insert(std::string("test_einsum_") + c);  // onnx 1.12 writes Einsum's cases in float64
  std::set<std::string> unsupported;
  for (const CaseResult& r : run_conformance(LOCKSTEP_TEST_DATA "/onnx-node", "ref"))
    if (r.status == CaseResult::Unsupported) unsupported.insert(r.name);
  unsupported.insert(testing::run_time_shaped_cases().begin(), testing::run_time_shaped_cases().end());
  for (const std::string t : {"metal", "metal-sim"}) {
    if (!testing::cannot_run(t).empty()) continue;
    size_t sample = testing::conformance_sample(t);
    std::vector<CaseResult> results = testing::conformance_on(t, sample);
    ASSERT_GE(results.size(), 300u / sample);
    size_t passed = 0, refused = 0;  // refused: the f64 and unsupported cases this run took
    for (const CaseResult& r : results) {
      if (unsupported.count(r.name)) {
        EXPECT_EQ(r.status, CaseResult::Unsupported) << t << " " << r.name << ": " << r.detail;
        ++refused;
      } else if (f64.count(r.name)) {
        ++refused;
        EXPECT_EQ(r.status, CaseResult::Unsupported) << t << " " << r.name;
        EXPECT_NE(r.detail.find("f64, which target '" + t + "' does not have"), std::string::npos) << r.name << ": " << r.detail;
      } else {
        EXPECT_EQ(r.status, CaseResult::Passed) << t << " " << r.name << ": " << r.detail;
        ++passed;
      }
    }
    // The full set holds every f64 and unsupported case (a sample, those it took).
    if (sample == 1) {
      EXPECT_EQ(refused, f64.size() + unsupported.size()) << t;
    }
    EXPECT_GE(passed, 300u / sample) << t;
  }
}

// Off macOS the metal target still compiles and prints MSL, and says why it cannot run.
TEST(MetalTarget, OffMacOsItCompilesAndSaysWhyItCannotRun) {
  std::string why = unavailable_reason(*find_target("metal"));
  if (why.empty()) GTEST_SKIP() << "this build has a Metal device";
  EXPECT_EQ(why, "Metal needs macOS with metal-cpp; this build has no Metal runtime");
  // Without an OpenCL loader: PoCL's own leaks would fail this under LeakSanitizer.
  CliResult info = shell("LOCKSTEP_OPENCL=/nonexistent/libOpenCL.so.1 " + shell_quote(testing::lockstep_binary()) +
                         " info --targets");
  EXPECT_NE(info.out.find("metal: "), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("cannot run here: " + why), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("31 buffer arguments per kernel"), std::string::npos) << info.out;
  CliResult run = lockstep({"run", model_file("g15"), "--target", "metal", "--seed-inputs", "vits"});
  EXPECT_EQ(run.status, 2) << run.out << run.err;
  EXPECT_NE(run.err.find(why), std::string::npos) << run.err;
  fs::path dir = scratch_dir() / "msl";
  CliResult emit = lockstep({"compile", model_file("g15"), "--target", "metal", "--emit-source", dir.string()});
  EXPECT_EQ(emit.status, 0) << emit.out << emit.err;
  EXPECT_NE(slurp(dir / "prelude.metal").find("#include <metal_stdlib>"), std::string::npos);
  EXPECT_NE(slurp(dir / "epilogue.metal").find("kernel void ls_plan_info("), std::string::npos);
}

// A variant of metal-sim whose schedules ask for more threads per threadgroup than the device has.
TEST(MetalSimLaunch, AThreadgroupOverTheLimitNamesTheKernelAndItsNodes) {
  TargetInfo wide = metal::sim_target_info();
  wide.name = "metal-sim-wide-groups";
  wide.desc.group_threads = wide.desc.max_group_threads = 2 * static_cast<int64_t>(metal::sim::kMaxThreadsPerThreadgroup);
  if (!find_target(wide.name)) register_target(wide);
  std::string err = error_of([&] { compile(tanh_graph(), wide.name)->run({{"x", Tensor(DType::f32, {1, 64})}}); });
  EXPECT_NE(err.find("kernel k0 (ONNX nodes: the tanh) cannot be launched"), std::string::npos) << err;
  EXPECT_NE(err.find("2048 threads per threadgroup, the device allows 1024"), std::string::npos) << err;
}

// ------------------------------------------------------------- the simulated device itself

using metal::Binding;
using metal::MetalBuffer;
using metal::MetalCommandBuffer;

constexpr const char* kKernels = R"(#include <metal_stdlib>
using namespace metal;
kernel void copy4(device float* out [[buffer(0)]], device const float* in [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[i] = in[i];
}
kernel void past_end(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) { out[i + 4] = 1.0f; }
kernel void before_start(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) { out[(int)i - 2] = 1.0f; }
kernel void neighbour(device uint* out [[buffer(0)]], device uint* seen [[buffer(1)]], uint t [[thread_position_in_threadgroup]],
                      uint g [[threadgroup_position_in_grid]], uint n [[threads_per_threadgroup]]) {
  out[g * n + t] = 100 * g + t;
  threadgroup_barrier(mem_flags::mem_device);
  seen[g * n + t] = out[g * n + (t + 1) % n];
}
kernel void shared_neighbour(device uint* seen [[buffer(0)]], uint t [[thread_position_in_threadgroup]],
                             uint g [[threadgroup_position_in_grid]], uint n [[threads_per_threadgroup]]) {
  threadgroup uint tile[8];
  tile[t] = 100 * g + t;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  seen[g * n + t] = tile[(t + 1) % n];
}
kernel void early_exit(device uint* out [[buffer(0)]], uint t [[thread_position_in_threadgroup]]) {
  if (t == 0) return;
  threadgroup_barrier(mem_flags::mem_device);
  out[t] = t;
}
kernel void subnormal_sqrt(device float* out [[buffer(0)]], device const float* in [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[2 * i] = sqrt(in[i]);
  out[2 * i + 1] = fast::sqrt(in[i]);
}
)";

struct Sim {
  metal::MetalDriver& d = metal::sim_driver();
  std::unique_ptr<metal::MetalQueue> q = d.new_queue();
  std::shared_ptr<metal::MetalLibrary> lib;
  explicit Sim(const std::string& prefix = "") : lib(d.library(d.build(prefix + kKernels))) {}

  std::shared_ptr<MetalBuffer> floats(std::vector<float> v) {
    auto b = d.new_buffer(v.size() * sizeof(float));
    b->write(0, v.data(), v.size() * sizeof(float));
    return b;
  }
  // Runs one dispatch; the command buffer's error ("" when it completed).
  std::string run(const std::string& fn, const std::vector<Binding>& b, size_t groups, size_t threads) {
    auto cb = q->command_buffer();
    cb->dispatch(lib->pipeline(fn), b, groups, threads);
    cb->commit();
    cb->wait_until_completed();
    return cb->status() == MetalCommandBuffer::Status::Error ? cb->error() : "";
  }
};

TEST(MetalSim, BindingsOutsideTheirBufferAreRefusedWhenEncoded) {
  Sim s;
  auto in = s.floats({1, 2, 3, 4}), out = s.floats({0, 0, 0, 0});
  EXPECT_EQ(s.run("copy4", {{out, 0, 16}, {in, 0, 16}}, 1, 4), "");
  EXPECT_EQ(std::memcmp(out->contents(), in->contents(), 16), 0);
  auto cb = s.q->command_buffer();
  std::string err = error_of([&] { cb->dispatch(s.lib->pipeline("copy4"), {{out, 0, 16}, {in, 8, 16}}, 1, 4); });
  EXPECT_EQ(err, "metal-sim: kernel copy4: buffer(1) is bound at offset 8 with 16 bytes, outside its MTLBuffer of 16 bytes");
  err = error_of([&] { cb->dispatch(s.lib->pipeline("copy4"), {{out, 0, 16}}, 1, 4); });
  EXPECT_EQ(err, "metal-sim: kernel copy4: buffer(1) is not bound");
  err = error_of([&] { cb->dispatch(s.lib->pipeline("copy4"), {{out, 0, 16}, {in, 0, 16}}, 1, 1025); });
  EXPECT_NE(err.find("1025 threads per threadgroup, the pipeline allows 1 to 1024"), std::string::npos) << err;
  EXPECT_NE(error_of([&] { s.lib->pipeline("no_such_kernel"); }).find("no kernel function 'no_such_kernel'"), std::string::npos);
}

// Every binding of known size runs on a copy ending at a guard page: the first byte past it
// faults, and a write before it is found in the page's slack.
TEST(MetalSim, AccessesOutsideABindingAreErrorsNamingKernelAndBuffer) {
  Sim s;
  auto big = s.floats(std::vector<float>(64, 0.0f));
  EXPECT_EQ(s.run("past_end", {{big, 0, 16}}, 1, 1), "kernel past_end: an access at byte 16 of buffer(0), which has 16 bytes bound");
  EXPECT_EQ(s.run("before_start", {{big, 64, 16}}, 1, 1),
            "kernel before_start: a write at byte -8 of buffer(0), which has 16 bytes bound");
  // Nothing of the failed dispatches reached the buffer.
  for (int i = 0; i < 64; ++i) EXPECT_EQ(reinterpret_cast<float*>(big->contents())[i], 0.0f) << i;
  // Unknown size: the dispatch runs on the buffer itself, whose end is a guard page too.
  auto page = s.floats(std::vector<float>(1024, 0.0f));
  EXPECT_EQ(s.run("past_end", {{page, 4080, 0}}, 1, 1),
            "kernel past_end: an access at byte 4096 of the MTLBuffer bound at buffer(0), which has 4096 bytes");
  // The runtime reports it naming the target, after the command buffer ran.
  EXPECT_GT(metal::sim::stats().guarded_bindings, 0);
}

// Threads of a threadgroup are fibres that meet at each barrier: a thread reads what its
// neighbour wrote before the barrier (in device and in threadgroup memory, one array per
// group), and a thread that returns early is an error, not a hang. Both fibre switches: the
// launcher's own (x86-64) and ucontext's (other hosts).
TEST(MetalSim, BarriersHoldEveryThreadOfTheGroup) {
  for (const char* prefix : {"", "#define LS_SIM_PORTABLE_FIBRES 1\n"}) {
    SCOPED_TRACE(*prefix ? "ucontext fibres" : "default fibres");
    Sim s(prefix);
    auto out = s.d.new_buffer(2 * 8 * 4), seen = s.d.new_buffer(2 * 8 * 4);
    EXPECT_EQ(s.run("neighbour", {{out, 0, 64}, {seen, 0, 64}}, 2, 8), "");
    auto* v = reinterpret_cast<uint32_t*>(seen->contents());
    for (uint32_t g = 0; g < 2; ++g)
      for (uint32_t t = 0; t < 8; ++t) EXPECT_EQ(v[g * 8 + t], 100 * g + (t + 1) % 8) << g << " " << t;
    EXPECT_EQ(s.run("shared_neighbour", {{seen, 0, 64}}, 2, 8), "");
    for (uint32_t g = 0; g < 2; ++g)
      for (uint32_t t = 0; t < 8; ++t) EXPECT_EQ(v[g * 8 + t], 100 * g + (t + 1) % 8) << "threadgroup memory " << g << " " << t;
    EXPECT_EQ(s.run("early_exit", {{out, 0, 64}}, 1, 8),
              "kernel early_exit: threadgroup 0: 1 threads finished while 7 wait at a threadgroup_barrier");
  }
}

TEST(MetalSim, BlitsFollowMacOsRules) {
  Sim s;
  auto a = s.floats({1, 2, 3, 4}), b = s.floats({0, 0, 0, 0});
  auto cb = s.q->command_buffer();
  EXPECT_NE(error_of([&] { cb->copy(a, 2, b, 0, 4); }).find("multiples of 4"), std::string::npos);
  EXPECT_NE(error_of([&] { cb->fill(b, 0, 3, 0xFF); }).find("multiples of 4"), std::string::npos);
  EXPECT_NE(error_of([&] { cb->copy(a, 0, b, 8, 16); }).find("overruns its buffer of 16"), std::string::npos);
  cb->copy(a, 4, b, 0, 8);
  cb->fill(b, 12, 4, 0);
  cb->commit();
  cb->wait_until_completed();
  EXPECT_EQ(cb->status(), MetalCommandBuffer::Status::Completed);
  auto* f = reinterpret_cast<float*>(b->contents());
  EXPECT_EQ(std::vector<float>(f, f + 4), (std::vector<float>{2, 3, 0, 0}));
}

// The runtime keeps to those rules: tensors of odd byte sizes go through its byte kernels.
TEST(MetalSim, TensorsOfOddByteSizesUploadAndDownloadExactly) {
  GraphBuilder b;
  int x = b.input("x", DType::u8, {dim(1), dim(7)});
  Tensor one(DType::u8, {1, 7});
  for (int i = 0; i < 7; ++i) one.data<uint8_t>()[i] = static_cast<uint8_t>(3 * i + 1);
  b.output(b.op("Add", "add", {x, b.initializer("c", one)}));
  Graph g = b.finish();
  Tensor in(DType::u8, {1, 7});
  for (int i = 0; i < 7; ++i) in.data<uint8_t>()[i] = static_cast<uint8_t>(250 + i);
  CompileOptions o;
  o.checked = true;  // odd-sized fills of guards and poison too
  o.verify_constants = true;
  std::vector<Tensor> y = compile(g, kSim, o)->run({{"x", in}});
  for (int i = 0; i < 7; ++i) EXPECT_EQ(y[0].data<uint8_t>()[i], static_cast<uint8_t>(250 + i + 3 * i + 1)) << i;
}

// Metal's precise maths are correctly rounded; fast:: flushes subnormals; MSL has no erf.
TEST(MetalSim, PreciseAndFastMathsBehaveAsMetalDocuments) {
  Sim s;
  auto in = s.floats({0x1p-140f, 4.0f}), out = s.d.new_buffer(16);
  EXPECT_EQ(s.run("subnormal_sqrt", {{out, 0, 16}, {in, 0, 8}}, 1, 2), "");
  auto* f = reinterpret_cast<float*>(out->contents());
  EXPECT_EQ(f[0], 0x1p-70f);
  EXPECT_EQ(f[1], 0.0f) << "fast::sqrt flushes a subnormal argument";
  EXPECT_EQ(f[2], 2.0f);
  EXPECT_EQ(f[3], 2.0f);
  std::string err = error_of([&] {
    s.d.build("#include <metal_stdlib>\nusing namespace metal;\nkernel void e(device float* o [[buffer(0)]]) { o[0] = erf(o[0]); }\n");
  });
  EXPECT_NE(err.find("erf"), std::string::npos) << err;
}

// A host write into a buffer that an encoded or committed copy has not read yet poisons it: a
// runtime that reuses a staging buffer too early copies 0xFF, not plausible stale bytes.
TEST(MetalSim, AStagingBufferRewrittenBeforeItsCopyRanIsPoisoned) {
  Sim s;
  std::vector<unsigned char> first(64, 0x11), second(8, 0x22);
  auto staging = s.d.new_buffer(64), dst = s.d.new_buffer(64);
  staging->write(0, first.data(), 64);
  int64_t before = metal::sim::stats().poisoned_writes;
  auto cb = s.q->command_buffer();
  cb->copy(staging, 0, dst, 0, 64);
  staging->write(0, second.data(), 8);  // too early: the copy is encoded, not run
  cb->commit();
  cb->wait_until_completed();
  EXPECT_EQ(metal::sim::stats().poisoned_writes, before + 1);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(dst->contents()[i], i < 8 ? 0x22 : 0xFF) << i;
  staging->write(0, first.data(), 64);  // after the copy completed: no poison
  EXPECT_EQ(metal::sim::stats().poisoned_writes, before + 1);
}

// ------------------------------------------------- the reported scenario, on metal-sim
// Exhaustive forms (ctest -L full): the default tier's staging-race checks on metal-sim are
// MetalSim.AStagingBufferRewrittenBeforeItsCopyRanIsPoisoned and the Staging, TargetFaults and
// CheckFaults suites.

// The 174-node graph with the staging wait skipped: wrong on metal-sim, `check` catches it in
// the output and the constants, `bisect --by all` names stage constants; without the fault
// cpu, metal-sim and ref agree.
TEST(MetalSimScenario, StagingReuseOn174IsWrongAndBisectNamesConstants) {
  SKIP_UNLESS_FULL("dozens of host-compiler builds");
  CliResult clean = lockstep({"check", model_file("g174"), "--targets", "cpu,metal-sim", "--seed-inputs", "vits", "--fresh", "1"});
  EXPECT_EQ(clean.status, 0) << clean.out << clean.err;
  EXPECT_NE(clean.line("verdict: ").find("agree"), std::string::npos) << clean.out;
  CliResult bad = lockstep({"check", model_file("g174"), "--targets", kSim, "--seed-inputs", "vits", "--fresh", "0",
                            "--inject-fault", "staging-reuse"});
  EXPECT_EQ(bad.status, 1) << bad.out << bad.err;
  CliResult b = lockstep({"bisect", model_file("g174"), "--target", kSim, "--by", "all", "--seed-inputs", "vits",
                          "--inject-fault", "staging-reuse"});
  EXPECT_EQ(b.status, 1) << b.out << b.err;
  EXPECT_EQ(b.line("verdict: ").rfind("stage constants: resident bytes differ from the host after upload: '", 0), 0u) << b.out;
  CliResult ok = lockstep({"bisect", model_file("g174"), "--target", kSim, "--by", "all", "--seed-inputs", "vits"});
  EXPECT_EQ(ok.status, 0) << ok.out << ok.err;
  EXPECT_EQ(ok.line("verdict: "), "agree: no stage, node or pass diverges") << ok.out;
}

// The A-B-A face: a pool of 74 slots holds the 170-node prefix's 73 weights but not the
// 174-node graph's, so with the fault the prefix is right in a fresh process and wrong when
// compiled after the 174-node graph (check's A-B-A row, B after A against B alone in a fresh
// process); bisect of the prefix names stage constants, found on its second compile.
TEST(MetalSimScenario, StagingReusePrefixRightAloneWrongAfterThe174) {
  SKIP_UNLESS_FULL("dozens of host-compiler builds");
  auto faulty = [](std::vector<std::string> a) {
    a.insert(a.end(), {"--seed-inputs", "vits", "--inject-fault", "staging-reuse", "--staging-slots", "74"});
    return a;
  };
  CliResult clean = lockstep({"run", model_file("g170"), "--target", "cpu", "--seed-inputs", "vits"});
  ASSERT_EQ(clean.status, 0) << clean.err;
  size_t at = clean.out.find("sha256=");
  ASSERT_NE(at, std::string::npos) << clean.out;
  std::string want = clean.out.substr(at + 7, 12);
  CliResult alone = lockstep(faulty({"run", model_file("g170"), "--target", kSim}));
  EXPECT_EQ(alone.status, 0) << alone.err;
  EXPECT_EQ(alone.out, clean.out) << "the prefix alone in a fresh process is right";
  CliResult aba = lockstep(faulty({"check", model_file("g174"), "--aba", model_file("g170"), "--targets", kSim, "--fresh", "0"}));
  EXPECT_EQ(aba.status, 1) << aba.out << aba.err;
  std::string row = aba.line("  metal-sim  A-B-A ");
  EXPECT_NE(row.find("DIFFER"), std::string::npos) << aba.out;
  EXPECT_NE(row.find("B alone: " + want), std::string::npos) << row;
  EXPECT_EQ(row.find("B after A: " + want), std::string::npos) << row;
  CliResult b = lockstep(faulty({"bisect", model_file("g170"), "--aba", model_file("g174"), "--target", kSim, "--by", "all"}));
  EXPECT_EQ(b.status, 1) << b.out << b.err;
  EXPECT_EQ(b.line("verdict: ").rfind("stage constants: resident bytes differ from the host after upload in stage ", 0), 0u)
      << b.out;
}

}  // namespace
}  // namespace lockstep

#include "verify_cli.h"

namespace lockstep {
namespace {

// The bundled example with one 3-byte staging slot: its byte copies, each a command buffer
// holding a mapped buffer until it ran, exhausted the process's mappings, and the error thrown
// on the simulator's queue thread aborted the process (3 runs in 4; with 1-byte slots 4 in 6).
// At most 64 command buffers are in flight now, and the run gives the default pool's bytes.
TEST(MetalSim, ThreeByteStagingSlotsRunTheExample) {
  std::string model = LOCKSTEP_TEST_DATA "/../../examples/vits_small.onnx";
  std::vector<std::string> args = {"run", model, "--target", "metal-sim", "--seed-inputs", "vits", "--dim", "T=64"};
  verify_test::CliResult want = verify_test::lockstep(args);
  ASSERT_EQ(want.status, 0) << want.err;
  args.insert(args.end(), {"--staging-slots", "1", "--staging-slot-bytes", "3"});
  verify_test::CliResult r = verify_test::lockstep(args);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, want.out);
}

}  // namespace
}  // namespace lockstep
