// The CPU target's machinery: disk cache integrity, the memory planner's proof, pass log and
// emitted source.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "backend/cpu/cpu_codegen.h"
#include "backend/cpu/cpu_compiler.h"
#include "backend/registry.h"
#include "core/dirs.h"
#include "frontend/onnx_export.h"
#include "graph/builder.h"
#include "passes/schedule.h"
#include "runtime/memory_plan.h"
#include "runtime/program.h"
#include "test_util.h"
#include "verify/parity.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

// y = tanh(x * 2 + 1): three nodes that fuse into one kernel.
Graph small_graph() {
  GraphBuilder b(17);
  int x = b.input("x", DType::f32, {dim(4), dim(40)});  // `run` fills it from seed 0
  Tensor two(DType::f32, {1}), one(DType::f32, {1});
  two.data<float>()[0] = 2;
  one.data<float>()[0] = 1;
  int m = b.op("Mul", "/mul", {x, b.initializer("two", two)});
  int a = b.op("Add", "/add", {m, b.initializer("one", one)});
  b.output(b.op("Tanh", "/tanh", {a}));
  return b.finish();
}

TensorMap ramp(int64_t n) {
  Tensor t(DType::f32, {4, n});
  for (int64_t k = 0; k < t.numel(); ++k) t.data<float>()[k] = 0.01f * static_cast<float>(k) - 1.0f;
  return {{"x", t}};
}

// Output of `lockstep run MODEL --target cpu` (stdout and stderr) in a fresh process.
std::string run_cli(const std::string& model, const fs::path& cache) {
  std::string cmd = "XDG_CACHE_HOME='" + cache.string() + "' " + lockstep::testing::lockstep_binary() + " run '" + model +
                    "' --target cpu 2>&1";
  FILE* f = popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, f)) out += buf;
  EXPECT_EQ(pclose(f), 0) << out;
  return out;
}

std::string sha_of(const std::string& line) {
  auto at = line.find("sha256=");
  return at == std::string::npos ? "" : line.substr(at + 7, 64);
}

// x op x for x float32[4, 8]: two programs whose kernels differ only in the operation.
std::string self_op_model(const fs::path& dir, const std::string& op) {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {dim(4), dim(8)});
  b.output(b.op(op, "/op", {x, x}));
  std::string path = (dir / (op + ".onnx")).string();
  save_onnx(b.finish(), path);
  return path;
}

std::vector<fs::path> entries(const fs::path& cache) {
  std::vector<fs::path> found;
  for (const auto& e : fs::recursive_directory_iterator(cache))
    if (e.path().extension() == ".bin") found.push_back(e.path());
  return found;
}

// A cache entry proves it belongs to its key, and is trusted only as this user's own regular
// file: an entry copied over another's gave X*X where X+X was asked (exit 0); a symbolic link
// out of the folder, even to a file of another user, was followed and loaded.
TEST(CpuBackend, ACacheEntryIsUsedOnlyForItsKeyAndOnlyAsThisUsersOwnFile) {
  PrivateTempDir tmp("lockstep-cache-test");
  fs::path cache = tmp.path() / "cache";
  std::string add = self_op_model(tmp.path(), "Add"), mul = self_op_model(tmp.path(), "Mul");
  std::string want = sha_of(run_cli(add, cache));
  fs::path add_entry = entries(cache).at(0);
  run_cli(mul, cache);
  fs::path mul_entry;
  for (const fs::path& e : entries(cache))
    if (e != add_entry) mul_entry = e;
  ASSERT_FALSE(mul_entry.empty());
  auto expect_rebuilt = [&](const std::string& why) {
    std::string out = run_cli(add, cache);
    EXPECT_NE(out.find("cache entry '" + add_entry.string() + "' " + why + "; rebuilding it"), std::string::npos)
        << out;
    EXPECT_EQ(sha_of(out), want) << out;
  };
  fs::copy_file(mul_entry, add_entry, fs::copy_options::overwrite_existing);
  expect_rebuilt("was written for another key");
  fs::path elsewhere = tmp.path() / "planted.bin";
  fs::copy_file(mul_entry, elsewhere);
  fs::remove(add_entry);
  fs::create_symlink(elsewhere, add_entry);
  expect_rebuilt("is a symbolic link");
  EXPECT_FALSE(fs::is_symlink(add_entry)) << "the link is replaced, not written through";
  fs::permissions(add_entry, fs::perms::group_write, fs::perm_options::add);
  expect_rebuilt("is writable by other users");
  EXPECT_EQ(run_cli(add, cache).find("warning"), std::string::npos) << "rebuilt whole, 0600";
  EXPECT_EQ(fs::status(add_entry).permissions() & (fs::perms::group_all | fs::perms::others_all), fs::perms::none);
  // A folder on the way that others may write: the cache is not used at all.
  fs::permissions(cache, fs::perms::others_write, fs::perm_options::add);
  std::string out = run_cli(add, cache);
  EXPECT_NE(out.find("the kernel cache was not used ('" + cache.string() + "' is writable by other users)"),
            std::string::npos)
      << out;
  EXPECT_EQ(sha_of(out), want);
}

// The XDG base directory spec: a relative XDG_CACHE_HOME is invalid and is ignored.
TEST(CpuBackend, ARelativeXdgCacheHomeIsIgnored) {
  const char* old = std::getenv("XDG_CACHE_HOME");
  std::string saved = old ? old : "";
  setenv("XDG_CACHE_HOME", "relative/cache", 1);
  fs::path p = cache_dir_path("cpu");
  old ? setenv("XDG_CACHE_HOME", saved.c_str(), 1) : unsetenv("XDG_CACHE_HOME");
  EXPECT_TRUE(p.is_absolute()) << p;
  EXPECT_EQ(p.string().find("relative/cache"), std::string::npos) << p;
}

TEST(CpuBackend, CorruptCacheEntryIsRebuiltWithAWarning) {
  fs::path dir = fs::temp_directory_path() / ("lockstep-cache-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string model = (dir / "small.onnx").string();
  save_onnx(small_graph(), model);
  std::string first = run_cli(model, dir / "cache");
  fs::path so;
  for (const auto& e : fs::recursive_directory_iterator(dir / "cache"))
    if (e.path().extension() == ".bin") so = e.path();
  ASSERT_FALSE(so.empty());
  {  // a damaged entry, as a crash or a full disk might leave it
    std::ofstream(so.string() + ".bad", std::ios::binary) << "not an object file";
    fs::rename(so.string() + ".bad", so);
  }
  std::string second = run_cli(model, dir / "cache");
  EXPECT_NE(second.find("warning: cpu cache entry"), std::string::npos) << second;
  EXPECT_NE(second.find("is corrupt; rebuilding it"), std::string::npos) << second;
  EXPECT_EQ(sha_of(second), sha_of(first));
  EXPECT_FALSE(sha_of(first).empty());
  std::string third = run_cli(model, dir / "cache");  // the rebuilt entry is whole again
  EXPECT_EQ(third.find("warning"), std::string::npos) << third;
  fs::remove_all(dir);
}

TEST(CpuBackend, FusedAndUnfusedProgramsGiveTheSameBytes) {
  Graph g = small_graph();
  auto fused = compile(g, "cpu");
  std::string want = tensor_sha256(fused->run(ramp(40))[0]);
  ASSERT_FALSE(fused->pass_log().empty());
  EXPECT_EQ(fused->pass_log()[0].rfind("#1 ", 0), 0u) << fused->pass_log()[0];
  CompileOptions none;
  none.pass_limit = 0;
  auto unfused = compile(g, "cpu", none);
  EXPECT_EQ(tensor_sha256(unfused->run(ramp(40))[0]), want);
  EXPECT_GT(unfused->sources().size(), fused->sources().size());  // one kernel per node unfused
  // Every optional application is skipped; the schedule always runs (code needs one).
  std::vector<std::string> log = unfused->pass_log();
  ASSERT_FALSE(log.empty());
  EXPECT_NE(log.back().find(" schedule: "), std::string::npos) << log.back();
  EXPECT_EQ(log.back().find("[skipped by --pass-limit]"), std::string::npos) << log.back();
  for (size_t k = 0; k + 1 < log.size(); ++k) EXPECT_NE(log[k].find("[skipped by --pass-limit]"), std::string::npos) << log[k];
}

// x[1, 8, 40] for the conv tests: step * (k % period) - offset at flat index k.
TensorMap conv_input(float step, int64_t period, float offset) {
  Tensor x(DType::f32, {1, 8, 40});
  for (int64_t k = 0; k < x.numel(); ++k) x.data<float>()[k] = step * static_cast<float>(k % period) - offset;
  return {{"x", x}};
}

// y1 = Conv(x, w1), y2 = Conv(x, w2): two kernels whose code differs only in their buffers.
Graph twin_convs() {
  GraphBuilder b(17);
  int x = b.input("x", DType::f32, {dim(1), dim(8), dim(40)});
  for (int j = 1; j <= 2; ++j) {
    Tensor w(DType::f32, {8, 8, 3});
    for (int64_t k = 0; k < w.numel(); ++k) w.data<float>()[k] = 0.05f * static_cast<float>((k * 7 + j * 3) % 11) - 0.2f;
    std::string n = "/conv" + std::to_string(j) + "/Conv";
    b.output(b.op("Conv", n, {x, b.initializer(n + ".weight", w)}, {{"pads", attr_ints({1, 1})}}));
  }
  return b.finish();
}

// The program shares one range function between kernels that differ only in their buffers (a
// decoder's repeated blocks: half its code, half its cold compile), each kernel passing its own.
TEST(CpuBackend, KernelsDifferingOnlyInTheirBuffersShareOneFunction) {
  Graph g = twin_convs();
  TensorMap in = conv_input(0.03f, 17, 0.25f);
  kir::Plan plan = lockstep::testing::plan_for(g, in);
  choose_schedules(plan, cpu::target_desc());
  // Each conv's kernels (its padded input's copy, the conv) run the other conv's twins.
  ASSERT_EQ(plan.kernels.size() % 2, 0u) << kir::describe(plan);
  std::string src = cpu::program_source(plan).text;
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = src.find(what); at != std::string::npos; at = src.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("_range(void* const* bufs, int64_t ls_begin, int64_t ls_end) {"), plan.kernels.size() / 2) << src;
  EXPECT_EQ(count("_range, ls_args, "), plan.kernels.size()) << src;
  EXPECT_EQ(count(" (runs k"), plan.kernels.size() / 2) << src;
  const std::string second = plan.kernels.back().name;
  EXPECT_EQ(src.find(second + "_range"), std::string::npos) << src;
  // Each kernel's own file (--emit-source) still reads its buffers by name.
  EXPECT_NE(cpu::source_files(plan)[plan.kernels.size()].second.find(second + "_range("), std::string::npos);
  std::vector<Tensor> out = compile(g, "cpu")->run(in);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_NE(tensor_sha256(out[0]), tensor_sha256(out[1]));  // each call read its own weights
  for (const Agreement& a : agreement_with_ref(g, in, out)) EXPECT_TRUE(agrees(a)) << describe(a);
}

// A conv to 13 channels: the tile rows (6 or 8) do not divide them, so the last row block takes
// its own copy of the tile with the rest; every output row must still be computed once.
TEST(CpuBackend, ARowBlockTheTileRowsDoNotDivideTakesTheRest) {
  GraphBuilder b(17);
  int x = b.input("x", DType::f32, {dim(1), dim(8), dim(40)});
  Tensor w(DType::f32, {13, 8, 3});
  for (int64_t k = 0; k < w.numel(); ++k) w.data<float>()[k] = 0.04f * static_cast<float>((k * 5) % 13) - 0.25f;
  b.output(b.op("Conv", "/conv/Conv", {x, b.initializer("w", w)}, {{"pads", attr_ints({1, 1})}}));
  Graph g = b.finish();
  TensorMap in = conv_input(0.02f, 23, 0.2f);
  kir::Plan plan = lockstep::testing::plan_for(g, in);
  choose_schedules(plan, cpu::target_desc());
  const kir::Kernel& conv = plan.kernels.back();
  int64_t rows = conv.schedule.rows;
  ASSERT_EQ(rows, std::min<int64_t>(cpu::target_desc().reduce_rows, 13)) << kir::describe(plan);
  ASSERT_NE(13 % rows, 0);
  std::string src = cpu::program_source(plan).text;
  EXPECT_NE(src.find("if (vrow < " + std::to_string(13 / rows) + ") {"), std::string::npos) << src;
  EXPECT_NE(src.find("for (int c = 0; c < " + std::to_string(13 % rows) + "; ++c)"), std::string::npos) << src;
  std::vector<Tensor> out = compile(g, "cpu")->run(in);
  for (const Agreement& a : agreement_with_ref(g, in, out)) EXPECT_TRUE(agrees(a)) << describe(a);
}

// A symbolic dim: one Program compiles again for each new input shape.
TEST(CpuBackend, RecompilesWhenInputShapesChange) {
  GraphBuilder b(17);
  int x = b.input("x", DType::f32, {dim(4), dim("T")});
  b.output(b.op("Sigmoid", "/sig", {x}));
  Graph g = b.finish();
  auto p = compile(g, "cpu");
  for (int64_t t : {40, 7, 40}) {
    TensorMap in = ramp(t);
    std::vector<Tensor> out = p->run(in);
    ASSERT_EQ(out[0].shape, (Shape{4, t}));
    for (const Agreement& a : agreement_with_ref(g, in, out)) EXPECT_TRUE(agrees(a)) << describe(a);
  }
}

TEST(CpuBackend, MemoryPlanProofCatchesOverlappingLiveBuffers) {
  kir::Plan p;
  for (int k = 0; k < 3; ++k) {
    kir::Buffer b;
    b.shape = {16};
    p.buffers.push_back(b);
  }
  p.buffers[0].kind = kir::Buffer::Input;
  // k0: b1 = b0; k1: b2 = b1 + b0, so b1 and b2 are live together.
  p.kernels.push_back(kir::Kernel{"k0", {"a"}, 1, kir::load(0, {16}, DType::f32, kir::out_vars(1))});
  p.kernels.push_back(kir::Kernel{"k1", {"b"}, 2, kir::binary(kir::Fn::Add, kir::load(1, {16}, DType::f32, kir::out_vars(1)),
                                                        kir::load(0, {16}, DType::f32, kir::out_vars(1)))});
  MemoryPlan m = plan_memory(p);
  EXPECT_NO_THROW(check_memory_plan(p, m));
  EXPECT_NE(m.offset[1], m.offset[2]);
  m.offset[2] = m.offset[1];  // a planner bug
  EXPECT_NE(testing::error_of([&] { check_memory_plan(p, m); }).find("overlaps"), std::string::npos);
}

// -march=native code belongs to the host CPU: its model and flags are in the cache key.
TEST(CpuBackend, CompilerIdentityNamesFlagsAndTheHostCpu) {
  if (!fs::exists("/proc/cpuinfo")) GTEST_SKIP() << "no /proc/cpuinfo here";
  std::string id = cpu::SystemCompiler().identity();
  EXPECT_NE(id.find("-march=native"), std::string::npos) << id;
  EXPECT_NE(id.find("\nflags"), std::string::npos) << id;
}

}  // namespace
}  // namespace lockstep
