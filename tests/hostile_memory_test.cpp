// Memory bombs: models of a few hundred bytes whose Expand, Tile, Range, Pad, ConvTranspose,
// Reshape or doubling Concat asks for gigabytes. Each is refused before it is allocated, on
// every target that runs here, with exit status 2 and one line naming the node (or input) and
// the bytes, under a memory limit (--max-memory 2G, as a 2 GiB container would impose), within
// seconds; none may be killed or run for long. The compile of a Pad to 1 TiB, external data
// declaring 16 GiB in a 256-byte file and a huge --dim are refused the same way.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <chrono>
#include <fstream>
#include <iostream>

#include "core/dirs.h"
#include "frontend/onnx_export.h"
#include "graph/builder.h"
#include "test_util.h"
#include "verify_cli.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using verify_test::CliResult;

Tensor i64s(const std::vector<int64_t>& v) {
  Tensor t(DType::i64, {static_cast<int64_t>(v.size())});
  for (size_t k = 0; k < v.size(); ++k) t.data<int64_t>()[k] = v[k];
  return t;
}

Tensor scalar_f32(float v) {
  Tensor t(DType::f32, {});
  t.data<float>()[0] = v;
  return t;
}

constexpr int64_t k2G = int64_t{1} << 31;  // elements: 8 GiB of float32

struct Bomb {
  std::string name, node;  // the node the error must name
  Graph graph;
};

std::vector<Bomb> bombs() {
  std::vector<Bomb> all;
  {
    GraphBuilder b;
    int x = b.input("x", DType::f32, {dim(1)});
    b.output(b.op("Expand", "/expand", {x, b.initializer("shape", i64s({k2G}))}));
    all.push_back({"expand", "/expand", b.finish()});
  }
  {
    GraphBuilder b;
    int x = b.input("x", DType::f32, {dim(1), dim(1)});
    b.output(b.op("Tile", "/tile", {x, b.initializer("repeats", i64s({1 << 16, 1 << 15}))}));
    all.push_back({"tile", "/tile", b.finish()});
  }
  {
    GraphBuilder b(17);
    int x = b.input("x", DType::f32, {dim(1)});
    int r = b.op("Range", "/range",
                 {b.initializer("start", scalar_f32(0)), b.initializer("limit", scalar_f32(2147483648.0f)),
                  b.initializer("delta", scalar_f32(1))});
    b.output(b.op("Add", "/add", {r, x}));
    all.push_back({"range", "/range", b.finish()});
  }
  {
    GraphBuilder b;
    int x = b.input("x", DType::f32, {dim(1)});
    b.output(b.op("Pad", "/pad", {x, b.initializer("pads", i64s({0, k2G}))}));
    all.push_back({"pad", "/pad", b.finish()});
  }
  {
    GraphBuilder b;
    int x = b.input("x", DType::f32, {dim(1), dim(1), dim(4)});
    Tensor w(DType::f32, {1, 1, 1});
    w.data<float>()[0] = 1;
    b.output(b.op("ConvTranspose", "/convt", {x, b.initializer("w", w)}, {{"strides", attr_ints({1 << 30})}}));
    all.push_back({"convtranspose", "/convt", b.finish()});
  }
  {
    GraphBuilder b;
    int x = b.input("x", DType::f32, {dim(1)});
    int c = b.op("ConstantOfShape", "/fill", {b.initializer("shape", i64s({k2G}))});
    int r = b.op("Reshape", "/reshape", {c, b.initializer("to", i64s({1 << 16, 1 << 15}))});
    b.output(b.op("Add", "/add", {r, x}));
    all.push_back({"reshape", "/fill", b.finish()});
  }
  {
    GraphBuilder b;
    int v = b.input("x", DType::f32, {dim(1 << 20)});
    for (int k = 0; k < 12; ++k) v = b.op("Concat", "/cat" + std::to_string(k), {v, v}, {{"axis", attr_int(0)}});
    b.output(v);
    all.push_back({"concat", "/cat", b.finish()});
  }
  return all;
}

class HostileMemory : public ::testing::Test {
 protected:
  PrivateTempDir dir{"lockstep-bombs"};

  // `args` with a 2 GiB limit: exit 2, one error line holding every needle, within 10 s.
  void expect_refused(std::vector<std::string> args, const std::vector<std::string>& needles) {
    args.insert(args.begin(), {"--max-memory", "2G"});
    auto t0 = std::chrono::steady_clock::now();
    CliResult r = verify_test::lockstep(args);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    for (const std::string& n : needles) EXPECT_NE(r.err.find(n), std::string::npos) << "no '" << n << "' in " << r.err;
    EXPECT_LT(s, 10.0) << r.err;
    std::cout << "refused in " << s << " s: " << r.err;  // the suite's evidence, one line a case
  }
};

TEST_F(HostileMemory, EveryBombIsRefusedOnEveryTargetNamingItsNode) {
  std::vector<std::string> targets = {"ref"};
  for (const std::string t : {"cpu", "cuda", "opencl", "metal", "metal-sim"})  // the CLI's own
    if (testing::cannot_run(t).empty()) targets.push_back(t);
  for (const Bomb& b : bombs()) {
    std::string model = (dir.path() / (b.name + ".onnx")).string();
    save_onnx(b.graph, model);
    EXPECT_LT(fs::file_size(model), 1200u) << b.name;
    for (const std::string& t : targets) {
      SCOPED_TRACE(b.name + " on " + t);
      expect_refused({"run", model, "--target", t}, {b.node, "bytes"});
    }
  }
}

// Under `ulimit -v` (RLIMIT_AS) instead of --max-memory: a bare "out of memory" naming nothing
// before; now the limit is read and named. (Not under AddressSanitizer, whose shadow memory
// does not fit such a limit.)
TEST_F(HostileMemory, UnderUlimitVTheLimitIsNamed) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit";
#endif
  Bomb b = bombs().front();
  std::string model = (dir.path() / "expand.onnx").string();
  save_onnx(b.graph, model);
  for (const char* t : {"ref", "cpu"}) {
    CliResult r = verify_test::shell("ulimit -v 4194304; " + verify_test::shell_quote(testing::lockstep_binary()) +
                                     " run " + verify_test::shell_quote(model) + " --target " + t);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("RLIMIT_AS"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("/expand"), std::string::npos) << r.err;
  }
}

// The compile alone of a Pad to 1 TiB: its index map is refused before it is probed.
TEST_F(HostileMemory, CompilingAPadToATebibyteIsRefused) {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {dim(1)});
  b.output(b.op("Pad", "/pad", {x, b.initializer("pads", i64s({0, int64_t{1} << 38}))}));
  std::string model = (dir.path() / "pad_1t.onnx").string();
  save_onnx(b.finish(), model);
  expect_refused({"compile", model, "--target", "cpu"}, {"/pad", "bytes"});
}

// External data declaring 16 GiB in a file of 256 bytes: the file's size is checked before
// anything is allocated.
TEST_F(HostileMemory, ExternalDataLargerThanItsFileIsRefusedBeforeItIsRead) {
  std::ofstream(dir.path() / "weights.bin", std::ios::binary) << std::string(256, '\0');
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("g");
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(int64_t{1} << 32);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* loc = w->add_external_data();
  loc->set_key("location");
  loc->set_value("weights.bin");
  onnx::NodeProto* n = g->add_node();
  n->set_op_type("Relu");
  n->add_input("w");
  n->add_output("y");
  onnx::ValueInfoProto* y = g->add_output();
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  std::ofstream(dir.path() / "model.onnx", std::ios::binary) << m.SerializeAsString();
  expect_refused({"run", (dir.path() / "model.onnx").string()}, {"weights.bin", "too short", "17179869184 bytes"});
}

// A length no machine holds, given on the command line: refused naming the input and its dims.
TEST_F(HostileMemory, AHugeDimIsRefusedNamingTheInput) {
  std::string model = LOCKSTEP_TEST_DATA "/../../examples/vits_small.onnx";
  for (const char* t : {"ref", "cpu"}) {
    SCOPED_TRACE(t);
    expect_refused({"run", model, "--target", t, "--seed-inputs", "vits", "--dim", "T=2147483648"},
                   {"input 'z_p' float32[1,16,2147483648]", "bytes"});
    expect_refused({"run", model, "--target", t, "--seed-inputs", "vits", "--dim", "T=100000000"}, {"bytes"});
  }
}

}  // namespace
}  // namespace lockstep
