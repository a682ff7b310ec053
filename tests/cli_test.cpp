// The lockstep binary as a user runs it: exit status, the one-line error naming the file or
// node, and the .npy files `run` writes, checked against values computed here.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "core/sha256.h"
#include "frontend/npy.h"
#include "frontend/onnx_import.h"
#include "test_util.h"

using namespace lockstep;
namespace fs = std::filesystem;

namespace {

// Tiny ONNX models written straight as protobufs, so bad ones are as easy as good ones.
struct ModelBuilder {
  onnx::ModelProto m;
  explicit ModelBuilder(int opset = 17) {
    m.set_ir_version(8);
    m.set_producer_name("cli_test");
    m.set_producer_version("1.0");
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    m.mutable_graph()->set_name("g");
  }
  // dims: "3" fixed, "T" symbolic, "?" unknown.
  static void set_type(onnx::ValueInfoProto* v, const std::string& name, int elem,
                       const std::vector<std::string>& dims) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* shape = tt->mutable_shape();
    for (const auto& d : dims) {
      auto* dim = shape->add_dim();
      if (d == "?") continue;
      if (std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
      else dim->set_dim_param(d);
    }
  }
  ModelBuilder& input(const std::string& name, int elem, const std::vector<std::string>& dims) {
    set_type(m.mutable_graph()->add_input(), name, elem, dims);
    return *this;
  }
  ModelBuilder& output(const std::string& name, int elem, const std::vector<std::string>& dims) {
    set_type(m.mutable_graph()->add_output(), name, elem, dims);
    return *this;
  }
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& ins,
                        const std::vector<std::string>& outs, const std::string& name) {
    auto* n = m.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : ins) n->add_input(i);
    for (const auto& o : outs) n->add_output(o);
    return *n;
  }
  ModelBuilder& initializer(const std::string& name, const std::vector<float>& vals,
                            const std::vector<int64_t>& dims) {
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : vals) t->add_float_data(v);
    return *this;
  }
  std::string bytes() const { return m.SerializeAsString(); }
  std::string save(const fs::path& p) const {
    std::ofstream(p, std::ios::binary) << bytes();
    return p.string();
  }
};

constexpr int F32 = onnx::TensorProto::FLOAT;
constexpr int I64 = onnx::TensorProto::INT64;
constexpr int BOOL = onnx::TensorProto::BOOL;

struct Result {
  int status = -1;
  std::string out, err;
};

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class Cli : public ::testing::Test {
 protected:
  fs::path dir;
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir = fs::temp_directory_path() / ("lockstep_cli_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { if (!getenv("LOCKSTEP_KEEP_TEST_DIRS")) fs::remove_all(dir); }

  // `shell_prefix` runs first in the same shell (e.g. a ulimit for the lockstep process only).
  Result lockstep(const std::vector<std::string>& args, const std::string& shell_prefix = "") {
    std::string cmd = shell_prefix + quote(lockstep::testing::lockstep_binary());
    for (const auto& a : args) cmd += " " + quote(a);
    cmd += " >" + quote((dir / "stdout.txt").string()) + " 2>" + quote((dir / "stderr.txt").string());
    int raw = std::system(cmd.c_str());
    Result r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
    r.out = slurp(dir / "stdout.txt");
    r.err = slurp(dir / "stderr.txt");
    fs::remove(dir / "stdout.txt");
    fs::remove(dir / "stderr.txt");
    return r;
  }

  // Exit 2 and one stderr line "lockstep: error: ..." containing every one of `needles`.
  void expect_user_error(const Result& r, const std::vector<std::string>& needles) {
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(r.err.rfind("lockstep: error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    for (const auto& n : needles) EXPECT_NE(r.err.find(n), std::string::npos) << "missing '" << n << "' in: " << r.err;
  }

  std::string npy(const std::string& name, const Tensor& t) {
    std::string p = (dir / name).string();
    write_npy(p, t);
    return p;
  }

  // y = x + 1 for x float32[2,3]: the smallest valid model.
  std::string add_one_model() {
    ModelBuilder b;
    b.input("x", F32, {"2", "3"}).output("y", F32, {"2", "3"}).initializer("one", {1.0f}, {});
    b.node("Add", {"x", "one"}, {"y"}, "add_one");
    return b.save(dir / "add_one.onnx");
  }
};

Tensor f32(Shape s, std::vector<float> v) {
  Tensor t(DType::f32, std::move(s));
  std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
  return t;
}

std::vector<float> floats(const Tensor& t) {
  std::vector<float> v(t.numel());
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

// Reference splitmix64, written from the published algorithm (Vigna), not the CLI's code.
uint64_t splitmix(uint64_t& s) {
  s += 0x9E3779B97F4A7C15ull;
  uint64_t z = s;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

// ---- bad input: one line, exit 2, nothing written ----

TEST_F(Cli, MissingModelFile) {
  std::string p = (dir / "nope.onnx").string();
  expect_user_error(lockstep({"run", p}), {p, "does not exist"});
  expect_user_error(lockstep({"info", p}), {p, "does not exist"});
}

TEST_F(Cli, TruncatedModel) {
  ModelBuilder b;
  b.input("x", F32, {"2"}).output("y", F32, {"2"});
  b.node("Identity", {"x"}, {"y"}, "id");
  std::string bytes = b.bytes();
  std::string p = (dir / "cut.onnx").string();
  std::ofstream(p, std::ios::binary) << bytes.substr(0, bytes.size() - 5);
  expect_user_error(lockstep({"run", p, "--out", (dir / "o").string()}), {p, "not a valid ONNX model"});
  EXPECT_FALSE(fs::exists(dir / "o"));
}

TEST_F(Cli, GarbageModel) {
  std::string p = (dir / "garbage.onnx").string();
  std::ofstream(p, std::ios::binary) << std::string("\xff\xff\xff\xff garbage", 12);
  expect_user_error(lockstep({"info", p}), {p, "not a valid ONNX model"});
}

TEST_F(Cli, NodeReadsUndefinedValue) {
  ModelBuilder b;
  b.input("x", F32, {"2"}).output("y", F32, {"2"});
  b.node("Add", {"x", "ghost"}, {"y"}, "reader");
  std::string p = b.save(dir / "undef.onnx");
  expect_user_error(lockstep({"run", p}), {p, "'reader'", "'ghost'", "no node, initializer or graph input"});
}

TEST_F(Cli, DuplicateOutput) {
  ModelBuilder b;
  b.input("x", F32, {"2"}).output("y", F32, {"2"});
  b.node("Identity", {"x"}, {"y"}, "first");
  b.node("Identity", {"x"}, {"y"}, "second");
  std::string p = b.save(dir / "dup.onnx");
  expect_user_error(lockstep({"run", p}), {"'y'", "defined more than once"});
}

TEST_F(Cli, UnknownOp) {
  ModelBuilder b;
  b.input("x", F32, {"2"}).output("y", F32, {"2"});
  b.node("FrobnicateV2", {"x"}, {"y"}, "frob");
  std::string p = b.save(dir / "unknown_op.onnx");
  expect_user_error(lockstep({"run", p}), {"'frob'", "FrobnicateV2", "not supported"});
}

TEST_F(Cli, UnsupportedAttributeValue) {
  // Cast to STRING (8): valid ONNX, but lockstep has no string tensors.
  ModelBuilder b;
  b.input("x", F32, {"2"}).output("y", F32, {"2"});
  auto& n = b.node("Cast", {"x"}, {"y"}, "to_text");
  auto* a = n.add_attribute();
  a->set_name("to");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(onnx::TensorProto::STRING);
  std::string p = b.save(dir / "cast_string.onnx");
  expect_user_error(lockstep({"run", p}), {"'to_text'", "Cast to string", "not supported"});
}

TEST_F(Cli, InvalidAttributeValue) {
  ModelBuilder b;
  b.input("x", F32, {"2"}).output("y", F32, {"4"});
  auto& n = b.node("Concat", {"x", "x"}, {"y"}, "join");
  auto* a = n.add_attribute();
  a->set_name("axis");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(3);
  std::string p = b.save(dir / "concat_axis.onnx");
  expect_user_error(lockstep({"run", p}), {"'join'", "axis"});
}

TEST_F(Cli, StringOutputType) {
  ModelBuilder b;
  b.input("x", F32, {"2"}).output("y", onnx::TensorProto::STRING, {"2"});
  b.node("Identity", {"x"}, {"y"}, "id");
  std::string p = b.save(dir / "string_out.onnx");
  expect_user_error(lockstep({"run", p}), {"'y'", "string", "does not support"});
}

TEST_F(Cli, UnknownAttribute) {
  ModelBuilder b;
  b.input("x", F32, {"2"}).output("y", F32, {"2"});
  auto& n = b.node("Relu", {"x"}, {"y"}, "relu_extra");
  auto* a = n.add_attribute();
  a->set_name("bogus");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(3);
  std::string p = b.save(dir / "bogus_attr.onnx");
  expect_user_error(lockstep({"run", p}), {"'relu_extra'", "'bogus'"});
}

TEST_F(Cli, InputNameNotInModel) {
  std::string m = add_one_model();
  std::string f = npy("w.npy", f32({2, 3}, {0, 0, 0, 0, 0, 0}));
  expect_user_error(lockstep({"run", m, "--input", "w=" + f}), {"'w'", "no input named", "x"});
}

TEST_F(Cli, InputWrongDtype) {
  std::string m = add_one_model();
  std::string f = npy("x64.npy", Tensor(DType::f64, {2, 3}));
  expect_user_error(lockstep({"run", m, "--input", "x=" + f}), {"'x'", f, "float64", "float32[2,3]"});
}

TEST_F(Cli, InputWrongRank) {
  std::string m = add_one_model();
  std::string f = npy("x1.npy", Tensor(DType::f32, {6}));
  expect_user_error(lockstep({"run", m, "--input", "x=" + f}), {"'x'", f, "rank 1"});
}

TEST_F(Cli, InputWrongShape) {
  std::string m = add_one_model();
  std::string f = npy("x33.npy", Tensor(DType::f32, {3, 3}));
  expect_user_error(lockstep({"run", m, "--input", "x=" + f}), {"'x'", f, "[3,3]", "axis 0"});
}

TEST_F(Cli, CorruptNpy) {
  std::string m = add_one_model();
  std::string f = (dir / "bad.npy").string();
  std::ofstream(f, std::ios::binary) << "not an npy file at all";
  expect_user_error(lockstep({"run", m, "--input", "x=" + f}), {f, "bad magic"});
  std::string good = encode_npy(Tensor(DType::f32, {2, 3}));
  std::ofstream(f, std::ios::binary | std::ios::trunc) << good.substr(0, good.size() - 4);
  expect_user_error(lockstep({"run", m, "--input", "x=" + f}), {f, "truncated or corrupt"});
}

TEST_F(Cli, MissingNpy) {
  std::string m = add_one_model();
  std::string f = (dir / "absent.npy").string();
  expect_user_error(lockstep({"run", m, "--input", "x=" + f}), {f, "does not exist"});
}

TEST_F(Cli, OutputFolderIsAFile) {
  std::string m = add_one_model();
  fs::path f = dir / "plain_file";
  std::ofstream(f) << "x";
  expect_user_error(lockstep({"run", m, "--out", f.string()}), {f.string(), "not a folder"});
  expect_user_error(lockstep({"run", m, "--out", (f / "sub").string()}), {f.string(), "not a folder"});
  EXPECT_EQ(slurp(f), "x");
}

TEST_F(Cli, OutputFolderNotWritable) {
  if (geteuid() == 0) GTEST_SKIP() << "root can write anywhere";
  std::string m = add_one_model();
  fs::path ro = dir / "read_only";
  fs::create_directories(ro);
  fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
  expect_user_error(lockstep({"run", m, "--out", ro.string()}), {ro.string(), "is not writable"});
  expect_user_error(lockstep({"run", m, "--out", (ro / "o").string()}), {"cannot create output folder"});
  fs::permissions(ro, fs::perms::owner_all);
  EXPECT_TRUE(fs::is_empty(ro));
}

TEST_F(Cli, OutputFolderCannotBeCreated) {
  // procfs refuses new folders even to root; checked before the model runs.
  if (!fs::exists("/proc/self")) GTEST_SKIP() << "no procfs";
  std::string m = add_one_model();
  expect_user_error(lockstep({"run", m, "--out", "/proc/lockstep_cli_test/o"}),
                    {"/proc/lockstep_cli_test/o", "cannot create output folder"});
}

TEST_F(Cli, FailedRunLeavesNoOutputFolder) {
  std::string m = add_one_model();
  fs::path out = dir / "a" / "b";
  expect_user_error(lockstep({"run", m, "--input", "ghost=x.npy", "--out", out.string()}), {"'ghost'"});
  EXPECT_FALSE(fs::exists(dir / "a"));
}

TEST_F(Cli, SymbolWithoutSize) {
  ModelBuilder b;
  b.input("x", F32, {"1", "frames"}).output("y", F32, {"1", "frames"});
  b.node("Relu", {"x"}, {"y"}, "r");
  std::string p = b.save(dir / "sym.onnx");
  expect_user_error(lockstep({"run", p}), {"'x'", "'frames'", "--dim frames=N"});
  expect_user_error(lockstep({"run", p, "--dim", "T=3"}), {"'T'", "frames"});
  expect_user_error(lockstep({"run", p, "--dim", "frames=-3"}), {"frames", "non-negative"});
}

TEST_F(Cli, UnknownTarget) {
  std::string m = add_one_model();
  expect_user_error(lockstep({"run", m, "--target", "tpu9000", "--out", (dir / "o").string()}), {"'tpu9000'"});
  EXPECT_FALSE(fs::exists(dir / "o"));
}

// ---- run: values, files, hashes ----

TEST_F(Cli, RunWritesOutputsWithSanitisedNames) {
  ModelBuilder b;
  b.input("a", F32, {"2", "3"}).input("b", F32, {"3"});
  b.output("sum/out:0", F32, {"2", "3"}).output("prod", F32, {"2", "3"});
  b.node("Add", {"a", "b"}, {"sum/out:0"}, "add");
  b.node("Mul", {"a", "b"}, {"prod"}, "mul");
  std::string m = b.save(dir / "two.onnx");
  std::vector<float> a = {1.5f, -2, 3, 0.25f, 5, -6}, bv = {10, 0.5f, -1};
  std::string fa = npy("a.npy", f32({2, 3}, a)), fb = npy("b.npy", f32({3}, bv));
  fs::path out = dir / "out" / "nested";
  Result r = lockstep({"run", m, "--target", "ref", "--input", "a=" + fa, "--input", "b=" + fb, "--out", out.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  ASSERT_TRUE(fs::exists(out / "sum_out_0.npy")) << r.out;
  ASSERT_TRUE(fs::exists(out / "prod.npy")) << r.out;
  EXPECT_EQ(std::distance(fs::directory_iterator(out), fs::directory_iterator()), 2);
  Tensor sum = read_npy((out / "sum_out_0.npy").string()), prod = read_npy((out / "prod.npy").string());
  EXPECT_EQ(sum.shape, (Shape{2, 3}));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      EXPECT_EQ(floats(sum)[i * 3 + j], a[i * 3 + j] + bv[j]);
      EXPECT_EQ(floats(prod)[i * 3 + j], a[i * 3 + j] * bv[j]);
    }
  // Each printed line: the name, the dtype and shape, the hash of the file's data bytes.
  for (auto [name, t] : {std::pair{std::string("sum/out:0"), sum}, std::pair{std::string("prod"), prod}}) {
    std::string line = name + "  float32[2,3]  sha256=" + sha256_hex(t.bytes.data(), t.bytes.size());
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\nnot in:\n" << r.out;
  }
  // min/max/rms of prod, computed here.
  double mn = 1e9, mx = -1e9, ss = 0;
  for (float v : floats(prod)) mn = std::min<double>(mn, v), mx = std::max<double>(mx, v), ss += double(v) * v;
  char stats[128];
  std::snprintf(stats, sizeof stats, "min=%.6g max=%.6g rms=%.6g", mn, mx, std::sqrt(ss / 6));
  EXPECT_NE(r.out.find(stats), std::string::npos) << stats << "\nnot in:\n" << r.out;
}

TEST_F(Cli, OverwritesOnlyWithCompleteFiles) {
  std::string m = add_one_model();
  fs::path out = dir / "o";
  fs::create_directories(out);
  std::ofstream(out / "y.npy") << "stale";
  Result r = lockstep({"run", m, "--out", out.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_npy((out / "y.npy").string()).shape, (Shape{2, 3}));
  EXPECT_EQ(std::distance(fs::directory_iterator(out), fs::directory_iterator()), 1);  // no temporaries
}

TEST_F(Cli, GeneratedInputsFollowTheDocumentedGenerator) {
  // x float32[2,T], n int64[T], m bool[T]: outputs are the inputs themselves (Identity).
  ModelBuilder b;
  b.input("x", F32, {"2", "T"}).input("n", I64, {"T"}).input("m", BOOL, {"T"});
  b.output("x_out", F32, {"2", "T"}).output("n_out", I64, {"T"}).output("m_out", BOOL, {"T"});
  b.node("Identity", {"x"}, {"x_out"}, "ix");
  b.node("Identity", {"n"}, {"n_out"}, "in");
  b.node("Identity", {"m"}, {"m_out"}, "im");
  std::string model = b.save(dir / "gen.onnx");
  const uint64_t seed = 12345;
  Result r = lockstep({"run", model, "--seed", std::to_string(seed), "--dim", "T=5", "--out", (dir / "o").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  auto stream = [&](size_t k) { return seed + 0x9E3779B97F4A7C15ull * (k + 1); };
  uint64_t s = stream(0);
  std::vector<float> x = floats(read_npy((dir / "o" / "x_out.npy").string()));
  ASSERT_EQ(x.size(), 10u);
  for (float v : x) {
    double want = static_cast<double>(splitmix(s) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    EXPECT_EQ(v, static_cast<float>(want));
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
  }
  s = stream(1);
  Tensor n = read_npy((dir / "o" / "n_out.npy").string());
  for (int k = 0; k < 5; ++k) EXPECT_EQ(n.data<int64_t>()[k], static_cast<int64_t>(splitmix(s) % 10));
  s = stream(2);
  Tensor mask = read_npy((dir / "o" / "m_out.npy").string());
  for (int k = 0; k < 5; ++k) EXPECT_EQ(mask.bytes[k], splitmix(s) >> 63);
}

TEST_F(Cli, SameSeedSameHashDifferentSeedDifferentHash) {
  std::string m = add_one_model();
  auto hash = [&](const std::string& seed) {
    Result r = lockstep({"run", m, "--seed", seed});
    EXPECT_EQ(r.status, 0) << r.err;
    std::smatch sm;
    EXPECT_TRUE(std::regex_search(r.out, sm, std::regex("sha256=([0-9a-f]{64})"))) << r.out;
    return sm.size() > 1 ? sm[1].str() : "";
  };
  std::string h1 = hash("1");
  EXPECT_EQ(h1, hash("1"));
  EXPECT_NE(h1, hash("2"));
}

TEST_F(Cli, SeedInputsVits) {
  // Named z_p/y_mask in swapped declaration order; y = z_p * y_mask.
  ModelBuilder b;
  b.input("y_mask", F32, {"1", "1", "T"}).input("z_p", F32, {"1", "4", "T"});
  b.output("y", F32, {"1", "4", "T"});
  b.node("Mul", {"z_p", "y_mask"}, {"y"}, "mask");
  std::string m = b.save(dir / "vits.onnx");
  Result r = lockstep({"run", m, "--seed-inputs", "vits", "--dim", "T=200", "--out", (dir / "o").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<float> y = floats(read_npy((dir / "o" / "y.npy").string()));
  ASSERT_EQ(y.size(), 800u);
  for (int c = 0; c < 4; ++c)
    for (int t = 0; t < 200; ++t)
      EXPECT_EQ(y[c * 200 + t], static_cast<float>(0.5 * std::sin(2 * M_PI * (3 * c + t) / 128.0))) << c << "," << t;
}

TEST_F(Cli, SeedInputsVitsByPosition) {
  // No z_p/y_mask names: the first 3-D float input is z_p, the second y_mask.
  ModelBuilder b;
  b.input("latent", F32, {"1", "2", "8"}).input("mask", F32, {"1", "1", "8"});
  b.output("latent_out", F32, {"1", "2", "8"}).output("mask_out", F32, {"1", "1", "8"});
  b.node("Identity", {"latent"}, {"latent_out"}, "a");
  b.node("Identity", {"mask"}, {"mask_out"}, "b");
  std::string m = b.save(dir / "vits_pos.onnx");
  Result r = lockstep({"run", m, "--seed-inputs", "vits", "--out", (dir / "o").string()});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<float> z = floats(read_npy((dir / "o" / "latent_out.npy").string()));
  for (int c = 0; c < 2; ++c)
    for (int t = 0; t < 8; ++t)
      EXPECT_EQ(z[c * 8 + t], static_cast<float>(0.5 * std::sin(2 * M_PI * (3 * c + t) / 128.0)));
  for (float v : floats(read_npy((dir / "o" / "mask_out.npy").string()))) EXPECT_EQ(v, 1.0f);
}

TEST_F(Cli, GivenInputBindsSymbol) {
  // x given as [1,3] binds T=3 for the generated z.
  ModelBuilder b;
  b.input("x", F32, {"1", "T"}).input("z", F32, {"1", "T"}).output("y", F32, {"1", "T"});
  b.node("Add", {"x", "z"}, {"y"}, "add");
  std::string m = b.save(dir / "bind.onnx");
  std::string fx = npy("x.npy", f32({1, 3}, {1, 2, 3}));
  Result r = lockstep({"run", m, "--input", "x=" + fx});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("y  float32[1,3]"), std::string::npos) << r.out;
  expect_user_error(lockstep({"run", m, "--input", "x=" + fx, "--dim", "T=4"}), {"T=4", fx, "3"});
}

// ---- info ----

TEST_F(Cli, InfoDescribesTheModel) {
  ModelBuilder b(13);
  b.input("z_p", F32, {"1", "4", "T"}).output("out", F32, {"1", "4", "T"});
  b.initializer("w", {1, 2, 3, 4}, {1, 4, 1}).initializer("b", {0.5f}, {});
  b.node("Mul", {"z_p", "w"}, {"m1"}, "n1");
  b.node("Add", {"m1", "b"}, {"a1"}, "n2");
  b.node("Mul", {"a1", "w"}, {"m2"}, "n3");
  b.node("Tanh", {"m2"}, {"out"}, "n4");
  std::string m = b.save(dir / "info.onnx");
  Result r = lockstep({"info", m});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* want : {"ir_version 8", "opset ai.onnx 13", "producer cli_test 1.0",
                           "z_p  float32[1,4,T]", "out  float32[1,4,T]", "nodes 4",
                           "parameters 5 in 2 initializers, 20 bytes"})
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\nnot in:\n" << r.out;
  // Mul (2) before Add and Tanh (1 each).
  std::regex mul("\\n  Mul +2\\n"), add("\\n  Add +1\\n"), tanh("\\n  Tanh +1\\n");
  EXPECT_TRUE(std::regex_search(r.out, mul)) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, add)) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, tanh)) << r.out;
  EXPECT_LT(r.out.find("Mul"), r.out.find("Add"));
}

TEST_F(Cli, InfoMarksUnsupportedOpsThenFails) {
  ModelBuilder b;
  b.input("x", F32, {"2"}).output("y", F32, {"2"});
  b.node("FrobnicateV2", {"x"}, {"y"}, "frob");
  std::string p = b.save(dir / "frob.onnx");
  Result r = lockstep({"info", p});
  EXPECT_NE(r.out.find("FrobnicateV2  1  (not supported)"), std::string::npos) << r.out;
  expect_user_error(r, {"'frob'", "not supported"});
}

// ---- run against ONNX's own backend-test data ----

TEST_F(Cli, RunMatchesOnnxBackendTestData) {
  // test_add and a broadcast case: inputs from input_*.pb, expected from output_0.pb.
  for (const char* name : {"test_add", "test_add_bcast"}) {
    fs::path c = fs::path(LOCKSTEP_TEST_DATA) / "onnx-node" / name;
    fs::path set = c / "test_data_set_0";
    std::vector<std::string> args = {"run", (c / "model.onnx").string(), "--out", (dir / name).string()};
    const char* inputs[] = {"x", "y"};
    for (int k = 0; k < 2; ++k) {
      Tensor t = load_tensor_pb((set / ("input_" + std::to_string(k) + ".pb")).string());
      args.push_back("--input");
      args.push_back(std::string(inputs[k]) + "=" + npy(std::string(name) + inputs[k] + ".npy", t));
    }
    Result r = lockstep(args);
    ASSERT_EQ(r.status, 0) << name << ": " << r.err;
    Tensor want = load_tensor_pb((set / "output_0.pb").string());
    Tensor got = read_npy((dir / name / "sum.npy").string());
    EXPECT_EQ(got.shape, want.shape) << name;
    EXPECT_EQ(floats(got), floats(want)) << name;  // float32 add is correctly rounded both ways
  }
}

TEST_F(Cli, OutputNamesThatSanitiseAlikeAreAnError) {
  ModelBuilder b;
  b.input("x", F32, {"2"}).output("a/b", F32, {"2"}).output("a:b", F32, {"2"});
  b.node("Identity", {"x"}, {"a/b"}, "i1");
  b.node("Relu", {"x"}, {"a:b"}, "i2");
  std::string m = b.save(dir / "clash.onnx");
  fs::path out = dir / "o";
  expect_user_error(lockstep({"run", m, "--out", out.string()}), {"'a/b'", "'a:b'", "a_b.npy"});
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(lockstep({"run", m}).status, 0);  // without --out nothing is written, nothing clashes
}

TEST_F(Cli, InputGivenTwice) {
  std::string m = add_one_model();
  std::string f = npy("x.npy", Tensor(DType::f32, {2, 3}));
  expect_user_error(lockstep({"run", m, "--input", "x=" + f, "--input", "x=" + f}), {"'x'", "twice"});
}

// ---- files written all or nothing, every write checked ----

// A disk that fills up: no file may grow past `bytes` rounded up to the shell's ulimit block
// (512 bytes in dash, 1024 in bash), and the write past it fails with EFBIG (SIGXFSZ ignored).
std::string file_size_limit(int blocks) {
  return "trap '' XFSZ; ulimit -f " + std::to_string(blocks) + "; exec ";
}

// Outputs a = x + 1 (24 bytes of data) and b = relu(big) (160000 bytes).
std::string small_and_big_model(const fs::path& p) {
  ModelBuilder b;
  b.input("x", F32, {"2", "3"}).input("big", F32, {"40000"});
  b.output("a", F32, {"2", "3"}).output("b", F32, {"40000"}).initializer("one", {1.0f}, {});
  b.node("Add", {"x", "one"}, {"a"}, "add");
  b.node("Relu", {"big"}, {"b"}, "relu");
  return b.save(p);
}

std::vector<std::string> listing(const fs::path& d) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(d)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST_F(Cli, RunWritesAllOutputsOrNone) {
  std::string m = small_and_big_model(dir / "two.onnx");
  fs::path out = dir / "o";
  // a fits, b does not: nothing written, the folder made for the run removed again.
  Result r = lockstep({"run", m, "--out", out.string()}, file_size_limit(64));
  expect_user_error(r, {(out / "b.npy").string(), "File too large"});
  EXPECT_FALSE(fs::exists(out)) << (fs::exists(out) ? ::testing::PrintToString(listing(out)) : "");
  // Into an earlier run's folder: its files stay exactly as they were, no temporaries left.
  fs::create_directories(out);
  std::ofstream(out / "a.npy") << "old a";
  std::ofstream(out / "b.npy") << "old b";
  r = lockstep({"run", m, "--out", out.string()}, file_size_limit(64));
  expect_user_error(r, {(out / "b.npy").string(), "File too large"});
  EXPECT_EQ(listing(out), (std::vector<std::string>{"a.npy", "b.npy"}));
  EXPECT_EQ(slurp(out / "a.npy"), "old a");
  EXPECT_EQ(slurp(out / "b.npy"), "old b");
  // With room for both, both are replaced.
  r = lockstep({"run", m, "--out", out.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_npy((out / "a.npy").string()).shape, (Shape{2, 3}));
  EXPECT_EQ(read_npy((out / "b.npy").string()).shape, (Shape{40000}));
  EXPECT_EQ(listing(out), (std::vector<std::string>{"a.npy", "b.npy"}));
}

TEST_F(Cli, RunThatCannotPlaceAnOutputLeavesTheOthersOld) {
  // b.npy is a folder: a is not replaced either.
  std::string m = small_and_big_model(dir / "two.onnx");
  fs::path out = dir / "o";
  fs::create_directories(out / "b.npy");
  std::ofstream(out / "a.npy") << "old a";
  Result r = lockstep({"run", m, "--out", out.string()});
  expect_user_error(r, {(out / "b.npy").string()});
  EXPECT_EQ(slurp(out / "a.npy"), "old a");
  EXPECT_EQ(listing(out), (std::vector<std::string>{"a.npy", "b.npy"}));
  EXPECT_TRUE(fs::is_empty(out / "b.npy"));
}

// A chain of 60 Relu/Neg nodes: IR dumps of a few kilobytes each.
std::string chain_model(const fs::path& p) {
  ModelBuilder b;
  b.input("x", F32, {"4"}).output("y", F32, {"4"});
  std::string prev = "x";
  for (int k = 0; k < 60; ++k) {
    std::string next = k == 59 ? "y" : "v" + std::to_string(k);
    b.node(k % 2 ? "Neg" : "Relu", {prev}, {next}, "node_number_" + std::to_string(k));
    prev = next;
  }
  return b.save(p);
}

TEST_F(Cli, DumpIrOntoAFullDiskIsAnError) {
  std::string m = chain_model(dir / "chain.onnx");
  fs::path ir = dir / "ir";
  Result r = lockstep({"compile", m, "--target", "cpu", "--dump-ir", ir.string()}, file_size_limit(1));
  expect_user_error(r, {ir.string(), "File too large"});
  // Whatever was written is whole: no empty or partial files, no temporaries.
  if (fs::exists(ir))
    for (const auto& e : fs::directory_iterator(ir)) {
      EXPECT_NE(e.path().filename().string()[0], '.') << e.path();
      EXPECT_GT(fs::file_size(e.path()), 0u) << e.path();
    }
}

TEST_F(Cli, DumpIrAndEmitSourceIntoAFileAreErrors) {
  std::string m = add_one_model();
  fs::path f = dir / "plain_file";
  std::ofstream(f) << "x";
  for (const char* flag : {"--dump-ir", "--emit-source"})
    for (const fs::path& where : {f, f / "sub"}) {
      Result r = lockstep({"compile", m, "--target", "cpu", flag, where.string()});
      expect_user_error(r, {where.string(), "not a folder"});
    }
  EXPECT_EQ(slurp(f), "x");
}

TEST_F(Cli, DumpIrAndEmitSourceCannotCreateTheirFolder) {
  if (!fs::exists("/proc/self")) GTEST_SKIP() << "no procfs";  // refuses new folders even to root
  std::string m = add_one_model();
  for (const char* flag : {"--dump-ir", "--emit-source"}) {
    Result r = lockstep({"compile", m, "--target", "cpu", flag, "/proc/lockstep_cli_test/o"});
    expect_user_error(r, {"/proc/lockstep_cli_test/o", "cannot create"});
  }
}

TEST_F(Cli, DumpIrAndEmitSourceIntoAReadOnlyFolder) {
  if (geteuid() == 0) GTEST_SKIP() << "root can write anywhere";
  std::string m = add_one_model();
  fs::path ro = dir / "read_only";
  fs::create_directories(ro);
  fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
  for (const char* flag : {"--dump-ir", "--emit-source"})
    expect_user_error(lockstep({"compile", m, "--target", "cpu", flag, ro.string()}), {ro.string(), "not writable"});
  fs::permissions(ro, fs::perms::owner_all);
}

TEST_F(Cli, EmitSourceAndDumpIrWriteOnlyIntoANewOrEmptyFolder) {
  std::string m = add_one_model();
  for (const char* flag : {"--dump-ir", "--emit-source"}) {
    fs::path d = dir / (std::string(flag + 2) + "_out");
    Result r = lockstep({"compile", m, "--target", "cpu", flag, d.string()});
    ASSERT_EQ(r.status, 0) << flag << ": " << r.err;
    std::vector<std::string> first = listing(d);
    ASSERT_FALSE(first.empty()) << flag;
    for (const std::string& name : first) {
      EXPECT_NE(name[0], '.') << flag;
      EXPECT_GT(fs::file_size(d / name), 0u) << flag << " " << name;
    }
    // Again into the same folder, now not empty: refused, nothing there touched.
    std::ofstream(d / first[0], std::ios::trunc) << "mine";
    expect_user_error(lockstep({"compile", m, "--target", "cpu", flag, d.string()}), {d.string(), "not empty"});
    EXPECT_EQ(slurp(d / first[0]), "mine") << flag;
    EXPECT_EQ(listing(d), first) << flag;
    // An empty folder that exists already is fine.
    fs::path e = dir / (std::string(flag + 2) + "_empty");
    fs::create_directories(e);
    EXPECT_EQ(lockstep({"compile", m, "--target", "cpu", flag, e.string()}).status, 0) << flag;
    EXPECT_FALSE(fs::is_empty(e)) << flag;
  }
  // The --emit-source folder is made before the work; a failed compile removes it again.
  fs::path d = dir / "a" / "src";
  expect_user_error(lockstep({"compile", m, "--target", "cpu", "--emit-source", d.string(), "--input", "ghost=x.npy"}),
                    {"'ghost'"});
  EXPECT_FALSE(fs::exists(dir / "a"));
}

TEST_F(Cli, FilesystemErrorsAreUserErrorsNotAborts) {
  // A path too long for the file system: std::filesystem throws where a command looks at it.
  std::string longest = (dir / std::string(5000, 'a')).string();
  for (const char* cmd : {"check", "conformance"})
    expect_user_error(lockstep({cmd, longest}), {"File name too long"});
}

namespace {

// y = tanh(x * m + 1) for x float32[2,T] and m float32[1,T]: two inputs sharing the symbol T.
std::string gated_model(const fs::path& p) {
  ModelBuilder b;
  b.input("x", F32, {"2", "T"}).input("m", F32, {"1", "T"}).output("y", F32, {"2", "T"});
  b.initializer("one", {1.0f}, {});
  b.node("Mul", {"x", "m"}, {"xm"}, "mul");
  b.node("Add", {"xm", "one"}, {"a"}, "add");
  b.node("Tanh", {"a"}, {"y"}, "tanh");
  return b.save(p);
}

}  // namespace

TEST_F(Cli, CheckSweepsLengthsOnOneProgram) {
  std::string model = gated_model(dir / "gated.onnx");
  Result r = lockstep({"check", model, "--dims", "T=1,7,64", "--fresh", "1", "--repeat", "1"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  for (const char* row : {"== T=1", "== T=7", "== T=64"}) EXPECT_NE(r.out.find(row), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cpu: one program (1 compile)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sweep verdict: agree at every length"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("DIFFER"), std::string::npos) << r.out;
}

TEST_F(Cli, BenchSweepCompilesOnceAndBindsTheRest) {
  std::string model = gated_model(dir / "gated.onnx");
  Result r = lockstep({"bench", model, "--dims", "T=5,3,1,9,5", "--runs", "1", "--warmup", "0"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 9) << r.out;  // header, 2 + 5 rows, 2 summary lines
  for (const char* T : {"T=3", "T=1", "T=9"}) {
    std::string row = r.out.substr(r.out.find(std::string("  ") + T + " "));
    EXPECT_NE(row.substr(0, row.find('\n')).find("bound (symbolic)"), std::string::npos) << T << ": " << r.out;
  }
  EXPECT_NE(r.out.find("compiles: 1 for 5 lengths"), std::string::npos) << r.out;
  Result spec = lockstep({"bench", model, "--dims", "T=5,3", "--runs", "1", "--warmup", "0", "--specialise"});
  EXPECT_NE(spec.out.find("compiles: 2 for 2 lengths"), std::string::npos) << spec.out;
}

namespace {

// The lines of `out` from the heading "== LABEL" up to the next heading or "sweep verdict:"
// line; "" when there is no such heading.
std::string section(const std::string& out, const std::string& label) {
  size_t at = out.find("== " + label + "\n");
  if (at == std::string::npos) return "";
  at = out.find('\n', at) + 1;
  size_t end = std::min(out.find("\n== ", at - 1), out.find("\nsweep verdict:", at - 1));
  return out.substr(at, end == std::string::npos ? std::string::npos : end + 1 - at);
}

// The text after `prefix` on the first line of `text` that starts with it; "" when none does.
std::string line_after(const std::string& text, const std::string& prefix) {
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);)
    if (l.rfind(prefix, 0) == 0) return l.substr(prefix.size());
  return "";
}

// The sha256 `run` prints for output `name` in `text`.
std::string printed_sha(const std::string& text, const std::string& name) {
  std::smatch m;
  std::regex re("(^|\n)" + name + "  [^ ]+  sha256=([0-9a-f]{64})");
  return std::regex_search(text, m, re) ? m[2].str() : "";
}

}  // namespace

TEST_F(Cli, RunSweepsLengthsOnOneCompile) {
  std::string model = gated_model(dir / "gated.onnx");
  Result r = lockstep({"run", model, "--target", "cpu", "--dims", "T=1,7,64"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("compiles: 1 for 3 lengths"), std::string::npos) << r.out;
  for (const std::string T : {"1", "7", "64"}) {
    std::string part = section(r.out, "T=" + T);
    EXPECT_NE(part.find("y  float32[2," + T + "]  sha256="), std::string::npos) << T << ": " << r.out;
    // The same bytes as a run of that length alone, whose output is the one line it always was.
    Result one = lockstep({"run", model, "--target", "cpu", "--dim", "T=" + T});
    ASSERT_EQ(one.status, 0) << one.err;
    EXPECT_EQ(std::count(one.out.begin(), one.out.end(), '\n'), 1) << one.out;
    EXPECT_EQ(one.out.rfind("y  float32[2," + T + "]  sha256=", 0), 0u) << one.out;
    ASSERT_NE(printed_sha(one.out, "y"), "") << one.out;
    EXPECT_EQ(printed_sha(part, "y"), printed_sha(one.out, "y")) << T << ": " << r.out << one.out;
  }
  // --out: one file per output and length, each holding the bytes whose hash was printed.
  fs::path out = dir / "o";
  r = lockstep({"run", model, "--target", "cpu", "--dims", "T=1,7", "--out", out.string()});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(listing(out), (std::vector<std::string>{"y.T=1.npy", "y.T=7.npy"}));
  for (const std::string T : {"1", "7"}) {
    Tensor t = read_npy((out / ("y.T=" + T + ".npy")).string());
    EXPECT_EQ(t.shape, (Shape{2, static_cast<int64_t>(std::stoll(T))}));
    std::string part = section(r.out, "T=" + T);
    EXPECT_EQ(printed_sha(part, "y"), sha256_hex(t.bytes.data(), t.bytes.size())) << r.out;
    EXPECT_NE(part.find("-> " + (out / ("y.T=" + T + ".npy")).string()), std::string::npos) << r.out;
  }
  // Never over files already there (a sweep's own or the user's), nor two lengths onto one file.
  std::string before = slurp(out / "y.T=1.npy");
  expect_user_error(lockstep({"run", model, "--target", "cpu", "--dims", "T=1,7", "--out", out.string()}),
                    {out.string(), "not empty"});
  EXPECT_EQ(slurp(out / "y.T=1.npy"), before);
  EXPECT_EQ(listing(out), (std::vector<std::string>{"y.T=1.npy", "y.T=7.npy"}));
  fs::path twice = dir / "twice";
  expect_user_error(lockstep({"run", model, "--target", "cpu", "--dims", "T=7,1,7", "--out", twice.string()}),
                    {"T=7", "twice"});
  EXPECT_FALSE(fs::exists(twice));
}

// A malformed list or a symbol the model lacks: exit 2 naming --dims, before any work, for
// every tool that sweeps.
TEST_F(Cli, SweepErrorsAreExit2NamingTheList) {
  std::string model = gated_model(dir / "gated.onnx");
  fs::path out = dir / "o";
  for (const std::vector<std::string>& cmd : std::vector<std::vector<std::string>>{
           {"run", model, "--target", "cpu", "--out", out.string()},
           {"bisect", model, "--target", "cpu"},
           {"reduce", model, "--target", "cpu", "-o", out.string()},
           {"check", model, "--targets", "cpu"},
           {"bench", model, "--target", "cpu"}}) {
    auto with = [&](const std::string& list) {
      std::vector<std::string> args = cmd;
      args.insert(args.end(), {"--dims", list});
      return lockstep(args);
    };
    Result r = with("T=1,x,7");
    expect_user_error(r, {"--dims T=1,x,7", "'x'", "not a non-negative integer"});
    EXPECT_EQ(r.out, "") << cmd[0];
    expect_user_error(with("T=1,,7"), {"--dims T=1,,7", "empty length"});
    r = with("U=1,7");
    expect_user_error(r, {"--dims U=1,7", "no dimension named 'U'", "symbols: T"});
    if (cmd[0] != "check" && cmd[0] != "bench") {  // those two print a heading first
      EXPECT_EQ(r.out, "") << cmd[0];
    }
    EXPECT_FALSE(fs::exists(out)) << cmd[0];
  }
}

TEST_F(Cli, BisectSweep) {
  std::string model = gated_model(dir / "gated.onnx");
  Result r = lockstep({"bisect", model, "--target", "cpu", "--dims", "T=1,7"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  for (const char* T : {"T=1", "T=7"})
    EXPECT_EQ(line_after(section(r.out, T), "verdict: ").rfind("agree", 0), 0u) << T << ": " << r.out;
  EXPECT_EQ(line_after(r.out, "sweep verdict: "), "cpu agrees with ref at every length (T=1, T=7)") << r.out;

  // A planted fault: the sweep stops at the first length where a bisect of that length alone
  // finds it, with that bisect's localisation.
  const std::vector<std::string> lengths = {"1", "7", "64"};
  const std::vector<std::string> fault = {"--target", "cpu", "--inject-fault", "kernel:tanh"};
  size_t first = lengths.size();
  std::string want;
  for (size_t k = 0; k < lengths.size() && first == lengths.size(); ++k) {
    std::vector<std::string> args = {"bisect", model, "--dim", "T=" + lengths[k]};
    args.insert(args.end(), fault.begin(), fault.end());
    Result one = lockstep(args);
    ASSERT_TRUE(one.status == 0 || one.status == 1) << one.out << one.err;
    if (one.status == 1) first = k, want = line_after(one.out, "verdict: ");
  }
  ASSERT_LT(first, lengths.size()) << "the planted fault shows at no length";
  std::vector<std::string> args = {"bisect", model, "--dims", "T=1,7,64"};
  args.insert(args.end(), fault.begin(), fault.end());
  r = lockstep(args);
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  std::string at = "T=" + lengths[first];
  EXPECT_NE(want.find("node tanh"), std::string::npos) << want;
  EXPECT_EQ(line_after(section(r.out, at), "verdict: "), want) << r.out;
  for (size_t k = 0; k < lengths.size(); ++k)
    EXPECT_EQ(section(r.out, "T=" + lengths[k]).empty(), k > first) << lengths[k] << ": " << r.out;
  std::string verdict = line_after(r.out, "sweep verdict: ");
  EXPECT_EQ(verdict.rfind("cpu disagrees with ref at " + at + ", the first length", 0), 0u) << r.out;
  EXPECT_NE(verdict.find(std::to_string(lengths.size() - first - 1) + " later length"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(r.out.size() - verdict.size() - 1), verdict + "\n") << "the last line";
}

TEST_F(Cli, ReduceSweep) {
  std::string model = gated_model(dir / "gated.onnx");
  fs::path none = dir / "none";
  Result r = lockstep({"reduce", model, "--target", "cpu", "--dims", "T=1,7", "-o", none.string()});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(line_after(r.out, "sweep verdict: "), "agree: no length in the sweep fails (T=1, T=7); nothing to reduce")
      << r.out;
  EXPECT_FALSE(fs::exists(none));

  // A planted fault: reduced at the first length where a reduce of that length alone fails, to
  // the same bundle (model, inputs of that length, reference outputs).
  const std::vector<std::string> lengths = {"1", "7", "64"};
  const std::vector<std::string> fault = {"--target", "cpu", "--inject-fault", "kernel:tanh"};
  size_t first = lengths.size();
  fs::path alone = dir / "alone";
  for (size_t k = 0; k < lengths.size() && first == lengths.size(); ++k) {
    std::vector<std::string> args = {"reduce", model, "--dim", "T=" + lengths[k], "-o", alone.string()};
    args.insert(args.end(), fault.begin(), fault.end());
    Result one = lockstep(args);
    ASSERT_TRUE(one.status == 0 || one.status == 1) << one.out << one.err;
    if (one.status == 1) first = k;
  }
  ASSERT_LT(first, lengths.size()) << "the planted fault shows at no length";
  fs::path swept = dir / "swept";
  std::vector<std::string> args = {"reduce", model, "--dims", "T=1,7,64", "-o", swept.string()};
  args.insert(args.end(), fault.begin(), fault.end());
  r = lockstep(args);
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  std::string at = "T=" + lengths[first];
  EXPECT_EQ(line_after(r.out, "sweep verdict: ").rfind("cpu disagrees with ref at " + at + ", the first length", 0), 0u)
      << r.out;
  EXPECT_NE(line_after(section(r.out, at), "verdict: ").find("tanh"), std::string::npos) << r.out;
  for (size_t k = 0; k < lengths.size(); ++k)
    EXPECT_EQ(section(r.out, "T=" + lengths[k]).empty(), k > first) << lengths[k] << ": " << r.out;
  for (const char* f : {"model.onnx", "test_data_set_0/input_0.pb", "test_data_set_0/output_0.pb"}) {
    ASSERT_TRUE(fs::exists(swept / f)) << f;
    EXPECT_EQ(slurp(swept / f), slurp(alone / f)) << f;
  }
  Tensor in = load_tensor_pb((swept / "test_data_set_0" / "input_0.pb").string());
  ASSERT_FALSE(in.shape.empty());
  EXPECT_EQ(in.shape.back(), std::stoll(lengths[first]));
}

TEST_F(Cli, InputsDisagreeingOnTIsExit2NamingBoth) {
  std::string model = gated_model(dir / "gated.onnx");
  Result r = lockstep({"run", model, "--input", "x=" + npy("x.npy", Tensor(DType::f32, {2, 4})), "--input",
                       "m=" + npy("m.npy", Tensor(DType::f32, {1, 5}))});
  expect_user_error(r, {"dimension 'T' is 5", "input 'm' from", "input 'x' from", "sets it to 4"});
}

// A Conv of 3 taps without padding needs T >= 3: at T=1 its shape rule says no, naming the
// length, the input it came from and the node, both before and after the symbolic program.
TEST_F(Cli, ALengthAShapeRuleRejectsIsExit2NamingTheInputAndTheRule) {
  ModelBuilder b;
  b.input("x", F32, {"1", "1", "T"}).output("y", F32, {"1", "1", "?"}).initializer("w", {1, 2, 3}, {1, 1, 3});
  b.node("Conv", {"x", "w"}, {"y"}, "conv");
  std::string model = b.save(dir / "conv.onnx");
  for (const char* dims : {"T=1", "T=5,1"}) {
    Result r = lockstep({"bench", model, "--dims", dims, "--runs", "1", "--warmup", "0"});
    expect_user_error(r, {"at T=1 (input 'x' axis 2)", "node 'conv' (Conv)"});
  }
}

// ---- nothing the user owns is overwritten ----

TEST_F(Cli, ReportsRefuseToReplaceTheModelOrAnInput) {
  std::string m = add_one_model();
  std::string before = slurp(m);
  expect_user_error(lockstep({"check", m, "--json", m}), {"--json", m, "an input of this command"});
  expect_user_error(lockstep({"check", m, "--html", (dir / "." / "add_one.onnx").string()}), {"--html", "an input"});
  std::string x = npy("x.npy", f32({2, 3}, {1, 2, 3, 4, 5, 6}));
  expect_user_error(lockstep({"check", m, "--input", "x=" + x, "--json", x}), {"--json", x});
  expect_user_error(lockstep({"bench", m, "--json", m}), {"--json", m});
  EXPECT_EQ(slurp(m), before);
}

TEST_F(Cli, RunOutRefusesAnOutputFileThatIsAnInput) {
  std::string m = add_one_model();
  std::string x = npy("y.npy", f32({2, 3}, {1, 2, 3, 4, 5, 6}));  // named like the output y
  std::string before = slurp(x);
  expect_user_error(lockstep({"run", m, "--input", "x=" + x, "--out", dir.string()}), {"--out", x, "an input"});
  EXPECT_EQ(slurp(x), before);
}

// reduce -o into the folder holding the user's model replaced model.onnx and README.md.
TEST_F(Cli, ReduceRefusesAFolderThatIsNotEmpty) {
  fs::create_directories(dir / "mine");
  std::string m = add_one_model();
  fs::copy_file(m, dir / "mine" / "model.onnx");
  std::ofstream(dir / "mine" / "README.md") << "my notes";
  Result r = lockstep({"reduce", (dir / "mine" / "model.onnx").string(), "--inject-fault", "kernel:add_one", "-o",
                       (dir / "mine").string()});
  expect_user_error(r, {(dir / "mine").string(), "not empty"});
  EXPECT_EQ(slurp(dir / "mine" / "README.md"), "my notes");
  EXPECT_EQ(slurp(dir / "mine" / "model.onnx"), slurp(m));
}

// ---- names a model controls reach the terminal and the reports escaped ----

TEST_F(Cli, AnOutputNameCannotControlTheTerminal) {
  std::string evil = "y\x1b]0;pwned\x07\x1b[2J\r\nforged line";
  ModelBuilder b;
  b.input("x", F32, {"2", "3"}).output(evil, F32, {"2", "3"});
  b.node("Relu", {"x"}, {evil}, "relu");
  std::string m = b.save(dir / "evil.onnx");
  Result r = lockstep({"run", m});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\r'), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;  // one output, one line
  EXPECT_NE(r.out.find("y\\x1b]0;pwned\\x07\\x1b[2J\\r\\nforged line"), std::string::npos) << r.out;
}

TEST_F(Cli, ANameOrPathWithANewlineGivesOneErrorLine) {
  ModelBuilder b;
  b.input("x", F32, {"2", "3"}).output("y", F32, {"2", "3"});
  b.node("NoSuchOp", {"x"}, {"y"}, "n\nlockstep: error: forged");
  std::string m = b.save(dir / "bad.onnx");
  expect_user_error(lockstep({"run", m}), {"n\\nlockstep: error: forged"});
  fs::path p = dir / "a\nlockstep: error: forged.onnx";  // a missing file the error names
  expect_user_error(lockstep({"run", p.string()}), {"a\\nlockstep: error: forged.onnx"});
}

// Invalid UTF-8 in a name made nlohmann's dump throw after the whole check ran: neither
// report was written and the command exited 2.
TEST_F(Cli, ReportsKeepInvalidUtf8NamesAsReplacementCharacters) {
  std::string bad = "y\xff\xfe";
  ModelBuilder b;
  b.input("x", F32, {"2", "3"}).output(bad, F32, {"2", "3"});
  b.node("Relu", {"x"}, {bad}, "relu\xc3");
  std::string m = b.save(dir / "utf8.onnx");
  std::string json = (dir / "r.json").string(), html = (dir / "r.html").string();
  Result r = lockstep({"check", m, "--fresh", "0", "--repeat", "1", "--json", json, "--html", html});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  nlohmann::json j = nlohmann::json::parse(slurp(json));  // valid JSON, valid UTF-8
  EXPECT_NE(j.dump().find("y\xEF\xBF\xBD\xEF\xBF\xBD"), std::string::npos);
  EXPECT_NE(slurp(html).find("y\xEF\xBF\xBD\xEF\xBF\xBD"), std::string::npos);
}

// ---- options: a value out of range is an error naming the option, never wrapped ----

TEST_F(Cli, OptionsOutOfRangeAreErrorsNamingTheOption) {
  std::string m = add_one_model();
  struct Case {
    std::vector<std::string> args;
    std::string option;
  };
  std::vector<Case> cases = {
      {{"run", m, "--seed", "-1"}, "--seed"},
      {{"run", m, "--seed", "18446744073709551616"}, "--seed"},
      {{"check", m, "--fresh", "-1"}, "--fresh"},
      {{"check", m, "--repeat", "-1"}, "--repeat"},
      {{"check", m, "--repeat", "0"}, "--repeat"},
      {{"check", m, "--tol", "cosine=nan"}, "--tol"},
      {{"check", m, "--tol", "cosine=-1"}, "--tol"},
      {{"check", m, "--tol", "cosine=2"}, "--tol"},
      {{"check", m, "--tol", "rel_l2=-1"}, "--tol"},
      {{"check", m, "--tol", "rel_l2=inf"}, "--tol"},
      {{"bench", m, "--top", "-3"}, "--top"},
      {{"bench", m, "--runs", "0"}, "--runs"},
      {{"reduce", m, "-o", (dir / "r").string(), "--max-compiles", "-1"}, "--max-compiles"},
      {{"run", m, "--device", "1"}, "--device 1"},
      {{"run", m, "--threads", "99999"}, "--threads"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args[2] + " " + c.args.back());
    expect_user_error(lockstep(c.args), {c.option});
  }
  EXPECT_EQ(lockstep({"run", m, "--seed", "18446744073709551615"}).status, 0);
}
