// Hostile models and inputs: no user string reaches generated source unescaped, no file outside
// the model's folder is read, devices and pipes are read only as far as their header declares,
// and options and versions out of range are refused.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "backend/cuda/cuda_api.h"
#include "backend/cuda/cuda_codegen.h"
#include "backend/cuda/nvrtc_compiler.h"
#include "backend/registry.h"
#include "codegen/c_printer.h"
#include "core/dirs.h"
#include "core/process.h"
#include "frontend/npy.h"
#include "frontend/onnx_export.h"
#include "frontend/onnx_import.h"
#include "graph/bind.h"
#include "graph/builder.h"
#include "passes/pipeline.h"
#include "passes/schedule.h"
#include "runtime/program.h"
#include "test_util.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using testing::error_of;

// What a hostile exporter may put in a name: a line break that ends a comment and starts code,
// a trailing backslash that splices the next line, block-comment ends, quotes, trigraphs,
// control characters, and length.
const std::vector<std::string>& hostile_names() {
  static const std::vector<std::string> names = {
      "a\n#include <cstdlib>\nstatic int e = std::system(\"touch /tmp/lockstep-pwned\");\n//",
      "ends in a backslash \\",
      "*/ int injected; /*",
      "quotes \" and ' and ?\?/ trigraph",
      std::string("ctl \x01\x1b[31m\x7f\r\t\v\f end"),
      std::string(300, 'n') + "\n" + std::string(10, 'x'),
      "r\\\nint spliced;",
  };
  return names;
}

// A chain that gives each hostile name to a node, and three of them to the input, the
// initializer and the output.
Graph hostile_graph() {
  const auto& names = hostile_names();
  GraphBuilder b;
  int x = b.input(names[0], DType::f32, {dim(2), dim(3)});
  Tensor w(DType::f32, {2, 3});
  for (int k = 0; k < 6; ++k) w.data<float>()[k] = 0.25f * static_cast<float>(k) - 0.5f;
  int wv = b.initializer(names[1], w);
  int v = b.op("Add", names[0], {x, wv});
  const char* ops[] = {"Tanh", "Sigmoid", "Neg", "Abs", "Exp", "Sqrt"};
  for (size_t k = 1; k < names.size(); ++k) v = b.op(ops[k - 1], names[k], {v});
  b.rename(v, names[2]);
  b.output(v);
  return b.finish();
}

TensorMap hostile_inputs() {
  Tensor x(DType::f32, {2, 3});
  for (int k = 0; k < 6; ++k) x.data<float>()[k] = 0.1f * static_cast<float>(k);
  return {{hostile_names()[0], x}};
}

// Every hostile name is absent from `src`, and no comment line holds a control character.
void expect_inert(const std::string& src, const std::string& what) {
  for (const std::string& n : hostile_names()) EXPECT_EQ(src.find(n), std::string::npos) << what << " holds a raw name";
  EXPECT_EQ(src.find("system(\""), std::string::npos) << what;
  EXPECT_EQ(src.find("?\?/"), std::string::npos) << what;
  std::istringstream lines(src);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("// k", 0) != 0) continue;
    for (char c : line) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << what << ": control byte in: " << line;
    EXPECT_EQ(line.back() == '\\', false) << what << ": comment ends in a line splice";
    EXPECT_EQ(line.find("*/"), std::string::npos) << what;
  }
}

TEST(HostileNames, CommentTextKeepsOnlyInertCharacters) {
  EXPECT_EQ(codegen::comment_text("/flow/flows.0/enc/Conv_1"), "/flow/flows.0/enc/Conv_1");  // readable
  EXPECT_EQ(codegen::comment_text("a/*b*/c"), "a/%2Ab%2A/c");
  EXPECT_EQ(codegen::comment_text("??/"), "%3F%3F/");
  EXPECT_EQ(codegen::comment_text("a\nb\\"), "a%0Ab%5C");
  EXPECT_EQ(codegen::comment_text("*/"), "%2A/");  // no "*/": the comment cannot end
  EXPECT_EQ(codegen::comment_text("100%"), "100%25");
  std::string longest = codegen::comment_text(std::string(300, 'q'));
  EXPECT_EQ(longest, std::string(codegen::kCommentTextMax, 'q') + "...(300 bytes)");
}

// The model file itself sits in a folder whose name is hostile too; the program compiles, runs,
// agrees with the reference, and its source holds no name unescaped.
TEST(HostileNames, CpuSourceCompilesAndHoldsNoRawName) {
  PrivateTempDir tmp("lockstep-test");
  fs::path dir = tmp.path() / "model\n#include <x>\\ */ \"dir\"";
  fs::create_directories(dir);
  fs::path model = dir / "m\n\\*.onnx";
  save_onnx(hostile_graph(), model.string());
  Graph g = load_onnx(model.string());
  CompileOptions o;
  o.use_cache = false;
  auto cpu = compile(g, "cpu", o);
  std::vector<Tensor> got = cpu->run(hostile_inputs());
  std::vector<Tensor> want = compile(g, "ref")->run(hostile_inputs());
  ASSERT_EQ(got.size(), 1u);
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(got[0].data<float>()[k], want[0].data<float>()[k], 1e-6);
  std::string all;
  for (const auto& [name, text] : cpu->sources()) all += text;
  EXPECT_NE(all.find(codegen::comment_text(hostile_names()[3])), std::string::npos) << "the names are kept, escaped";
  expect_inert(all, "cpu source");
  EXPECT_FALSE(fs::exists("/tmp/lockstep-pwned"));
}

TEST(HostileNames, CudaSourceCompilesAndHoldsNoRawName) {
  Graph g = hostile_graph();
  kir::Plan plan = testing::plan_for(g, hostile_inputs());
  choose_schedules(plan, cuda::target_desc());
  std::string src = cuda::program_source(plan).text;
  expect_inert(src, "cuda source");
  std::string why;
  if (!cuda::nvrtc(&why)) GTEST_SKIP() << "NVRTC not here, the CUDA source was checked but not compiled: " << why;
  EXPECT_FALSE(cuda::nvrtc_compile(src, cuda::default_compute_capability()).image.empty());
}

// ------------------------------------------------------------------ external data

// A model with one initializer `w` [4] f32 whose bytes are external data at `location`.
void write_external_model(const fs::path& model, const std::string& location) {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {dim(4)});
  int w = b.initializer("w", Tensor(DType::f32, {4}));
  b.output(b.op("Add", "add", {x, w}));
  onnx::ModelProto m = export_model(b.finish());
  for (auto& t : *m.mutable_graph()->mutable_initializer()) {
    t.clear_raw_data();
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    auto* kv = t.add_external_data();
    kv->set_key("location");
    kv->set_value(location);
  }
  std::ofstream(model, std::ios::binary) << m.SerializeAsString();
}

TEST(ExternalData, ALinkOutOfTheModelFolderIsRefused) {
  PrivateTempDir tmp("lockstep-test");
  fs::create_directories(tmp.path() / "model");
  std::ofstream(tmp.path() / "secret.bin", std::ios::binary) << std::string(16, 'S');
  fs::create_symlink(tmp.path() / "secret.bin", tmp.path() / "model" / "w.bin");
  write_external_model(tmp.path() / "model" / "m.onnx", "w.bin");
  std::string e = error_of([&] { load_onnx((tmp.path() / "model" / "m.onnx").string()); });
  EXPECT_NE(e.find("outside the model's folder"), std::string::npos) << e;
  EXPECT_NE(e.find("initializer 'w'"), std::string::npos) << e;
}

TEST(ExternalData, ALinkToEtcPasswdIsRefused) {
  PrivateTempDir tmp("lockstep-test");
  fs::create_symlink("/etc/passwd", tmp.path() / "w.bin");
  write_external_model(tmp.path() / "m.onnx", "w.bin");
  std::string e = error_of([&] { load_onnx((tmp.path() / "m.onnx").string()); });
  EXPECT_NE(e.find("outside the model's folder"), std::string::npos) << e;
}

TEST(ExternalData, ALinkInsideTheFolderIsFollowed) {
  PrivateTempDir tmp("lockstep-test");
  float vals[4] = {1, 2, 3, 4};
  std::ofstream(tmp.path() / "real.bin", std::ios::binary).write(reinterpret_cast<char*>(vals), sizeof vals);
  fs::create_symlink("real.bin", tmp.path() / "w.bin");
  write_external_model(tmp.path() / "m.onnx", "w.bin");
  Graph g = load_onnx((tmp.path() / "m.onnx").string());
  Tensor x(DType::f32, {4});
  Tensor y = compile(g, "ref")->run({{"x", x}})[0];
  EXPECT_EQ(y.data<float>()[3], 4.0f);
}

TEST(ExternalData, AFifoIsRefusedWithoutBlocking) {
  PrivateTempDir tmp("lockstep-test");
  ASSERT_EQ(::mkfifo((tmp.path() / "w.bin").c_str(), 0600), 0);
  write_external_model(tmp.path() / "m.onnx", "w.bin");
  std::string e = error_of([&] { load_onnx((tmp.path() / "m.onnx").string()); });
  EXPECT_NE(e.find("not a regular file"), std::string::npos) << e;
}

TEST(ExternalData, DotDotAbsoluteFolderAndNulLocationsAreRefused) {
  PrivateTempDir tmp("lockstep-test");
  fs::create_directories(tmp.path() / "model" / "sub");
  std::ofstream(tmp.path() / "outside.bin") << std::string(16, 'o');
  std::string base = (tmp.path() / "model").string();
  std::vector<std::string> refused = {"../outside.bin", "sub/../../outside.bin", "/etc/passwd", "sub", ".",
                                      std::string("w\0.bin", 6)};
  for (const std::string& loc : refused) {
    std::string e = error_of([&] { resolve_external_location(base, loc, "initializer 'w'"); });
    EXPECT_NE(e.find("initializer 'w'"), std::string::npos) << "location '" << loc << "' was accepted";
  }
}

TEST(ExternalData, InfoListsTheFilesAModelReads) {
  PrivateTempDir tmp("lockstep-test");
  std::ofstream(tmp.path() / "w.bin", std::ios::binary) << std::string(16, '\0');
  write_external_model(tmp.path() / "m.onnx", "w.bin");
  ProcessResult r = run_process({testing::lockstep_binary(), "info", (tmp.path() / "m.onnx").string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("files read (2)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find((fs::canonical(tmp.path()) / "w.bin").string()), std::string::npos) << r.output;
}

// ------------------------------------------------------------------ bounded reads

TEST(BoundedReads, AnNpyFromADeviceIsReadOnlyAsFarAsItsHeaderDeclares) {
  // /dev/zero has no .npy magic: refused after a few bytes, not after filling memory.
  std::string e = error_of([] { read_npy("/dev/zero"); });
  EXPECT_NE(e.find("bad magic"), std::string::npos) << e;
  // A valid header in front of an endless stream: the declared bytes, then an error.
  PrivateTempDir tmp("lockstep-test");
  fs::path fifo = tmp.path() / "in.npy";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Tensor t(DType::f32, {4});
  std::string head = encode_npy(t);
  pid_t pid = fork();
  if (pid == 0) {  // the writer: the file, then more bytes than the header declares
    std::ofstream out(fifo, std::ios::binary);
    out << head << std::string(1 << 16, 'z');
    _exit(0);
  }
  e = error_of([&] { read_npy(fifo.string()); });
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_NE(e.find("more data than its header declares"), std::string::npos) << e;
}

TEST(BoundedReads, ARegularNpyWhoseSizeDisagreesIsRefusedBeforeItsDataIsRead) {
  PrivateTempDir tmp("lockstep-test");
  std::string bytes = encode_npy(Tensor(DType::f32, {4}));
  std::ofstream(tmp.path() / "a.npy", std::ios::binary) << bytes << "extra";
  std::string e = error_of([&] { read_npy((tmp.path() / "a.npy").string()); });
  EXPECT_NE(e.find("needs 16"), std::string::npos) << e;
}

TEST(BoundedReads, AModelFromADeviceIsRefused) {
  std::string e = error_of([] { load_onnx("/dev/zero"); });
  EXPECT_FALSE(e.empty());
}

// ------------------------------------------------------------------ options and versions

TEST(Options, ThreadsAndPassLimitOutOfRangeAreRefused) {
  GraphBuilder b;
  b.output(b.op("Neg", "neg", {b.input("x", DType::f32, {dim(2)})}));
  Graph g = b.finish();
  for (int threads : {-1, 100000}) {
    CompileOptions o;
    o.threads = threads;
    EXPECT_NE(error_of([&] { compile(g, "cpu", o); }).find("--threads"), std::string::npos) << threads;
  }
  CompileOptions o;
  o.pass_limit = -5;
  EXPECT_NE(error_of([&] { compile(g, "cpu", o); }).find("--pass-limit"), std::string::npos);
  for (const char* flag : {"--threads=100000", "--pass-limit=-5"}) {
    ProcessResult r = run_process({testing::lockstep_binary(), "compile", "/nonexistent.onnx", flag});
    EXPECT_NE(r.exit_code, 0) << flag;
    EXPECT_NE(r.output.find(std::string(flag).substr(0, std::string(flag).find('='))), std::string::npos) << r.output;
  }
}

TEST(Versions, AnIrVersionNewerThanOnnxKnowsIsRefused) {
  GraphBuilder b;
  b.output(b.op("Neg", "neg", {b.input("x", DType::f32, {dim(2)})}));
  onnx::ModelProto m = export_model(b.finish());
  m.set_ir_version(99);
  std::string e = error_of([&] { import_model(m, "m.onnx", "."); });
  EXPECT_NE(e.find("IR version 99"), std::string::npos) << e;
}

// ------------------------------------------------------------------ cache folder

// Runs `lockstep run` on a small model with `env` set; returns its result.
// Writes a one-Tanh model and its input into `dir`; returns the `lockstep run` command for it.
std::vector<std::string> tanh_run(const fs::path& dir) {
  GraphBuilder b;
  b.output(b.op("Tanh", "tanh", {b.input("x", DType::f32, {dim(3)})}));
  save_onnx(b.finish(), (dir / "m.onnx").string());
  write_npy((dir / "x.npy").string(), Tensor(DType::f32, {3}));
  return {testing::lockstep_binary(), "run", (dir / "m.onnx").string(), "--target", "cpu",
          "--input", "x=" + (dir / "x.npy").string(), "--out", (dir / "out").string()};
}

// Runs that command with `env` (NAME=VALUE) set.
ProcessResult run_with_env(const std::string& env, const fs::path& dir) {
  std::vector<std::string> argv = {"env", env};
  for (const std::string& a : tanh_run(dir)) argv.push_back(a);
  return run_process(argv);
}

TEST(CacheFolder, AnUnusableCacheRunsUncachedWithAWarning) {
  PrivateTempDir tmp("lockstep-test");
  std::ofstream(tmp.path() / "cache-is-a-file") << "x";
  ProcessResult r = run_with_env("XDG_CACHE_HOME=" + (tmp.path() / "cache-is-a-file").string(), tmp.path());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("kernel cache was not used"), std::string::npos) << r.output;
}

TEST(CacheFolder, AFolderOthersCanWriteIsNotTrusted) {
  PrivateTempDir tmp("lockstep-test");
  fs::create_directories(tmp.path() / "lockstep" / "cpu");
  fs::permissions(tmp.path() / "lockstep" / "cpu", fs::perms::all);
  ProcessResult r = run_with_env("XDG_CACHE_HOME=" + tmp.path().string(), tmp.path());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("writable by other users"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::is_empty(tmp.path() / "lockstep" / "cpu")) << "nothing may be written into it";
}

// A cache on a full disk: a 4 KiB tmpfs in a private mount namespace (skipped where the
// sandbox allows no mounts). Code is built in a private folder; the entry cannot be written,
// which is said, and the run succeeds and leaves no temporary behind.
TEST(CacheFolder, ACacheOnAFullDiskRunsUncachedAndLeavesNoTemporaries) {
  PrivateTempDir tmp("lockstep-test");
  fs::create_directories(tmp.path() / "small");
  if (run_process({"unshare", "-m", "mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs", (tmp.path() / "small").string()})
          .exit_code != 0)
    GTEST_SKIP() << "no private mounts in this sandbox: the full-disk cache is not exercised";
  // $0 is the small folder, "$@" the run; the shell only mounts and counts what is left.
  std::string script = "mount -t tmpfs -o size=4k tmpfs \"$0\" && XDG_CACHE_HOME=\"$0\" \"$@\"; rc=$?; "
                       "echo left: $(find \"$0\" -name '*.tmp*' | wc -l); exit $rc";
  std::vector<std::string> argv = {"unshare", "-m", "sh", "-c", script, (tmp.path() / "small").string()};
  for (const std::string& a : tanh_run(tmp.path())) argv.push_back(a);
  ProcessResult r = run_process(argv);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("cannot write the kernel cache"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("No space left on device"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("left: 0"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(tmp.path() / "out" / "tanh_output_0.npy")) << r.output;
}

// A compiler that answers --version but rejects everything: the generated code "does not
// compile", which is lockstep's bug, not the user's: exit 3 and a request for a report.
TEST(ExitStatus, GeneratedCodeTheCompilerRejectsIsAnInternalError) {
  PrivateTempDir tmp("lockstep-test");
  fs::path cxx = tmp.path() / "rejecting-c++";
  std::ofstream(cxx) << "#!/bin/sh\n[ \"$1\" = --version ] && { echo rejecting 1.0; exit 0; }\necho 'error: no'; exit 1\n";
  fs::permissions(cxx, fs::perms::owner_all);
  ProcessResult r = run_with_env("LOCKSTEP_CXX=" + cxx.string(), tmp.path());
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("internal error"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Please report it"), std::string::npos) << r.output;
}

// No compiler at all is the user's setup, not lockstep's bug: exit 2 saying what is needed.
TEST(ExitStatus, AMissingCompilerIsNamed) {
  PrivateTempDir tmp("lockstep-test");
  ProcessResult r = run_with_env("LOCKSTEP_CXX=" + (tmp.path() / "no-such-c++").string(), tmp.path());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("target 'cpu' needs a C++ compiler"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no-such-c++"), std::string::npos) << r.output;
}

TEST(CacheFolder, NoCacheBuildsInAFreshPrivateFolder) {
  // The old predictable name, planted as a link: it must be neither followed nor written.
  PrivateTempDir tmp("lockstep-test");
  fs::path planted = fs::temp_directory_path() / ("lockstep-nocache-" + std::to_string(getpid()));
  fs::remove_all(planted);
  fs::create_directory_symlink(tmp.path(), planted);
  GraphBuilder b;
  b.output(b.op("Neg", "neg", {b.input("x", DType::f32, {dim(2)})}));
  Graph g = b.finish();
  CompileOptions o;
  o.use_cache = false;
  Tensor x(DType::f32, {2});
  x.data<float>()[1] = 2;
  EXPECT_EQ(compile(g, "cpu", o)->run({{"x", x}})[0].data<float>()[1], -2.0f);
  EXPECT_TRUE(fs::is_empty(tmp.path()));
  fs::remove(planted);
}

}  // namespace
}  // namespace lockstep
