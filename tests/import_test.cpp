// ONNX import details that exporter output relies on: external data, node order, opsets.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>

#include "frontend/onnx_import.h"
#include "ops/op.h"
#include "ref/interpreter.h"
#include "test_util.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("lockstep-import-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

void tensor_type(onnx::ValueInfoProto* v, const std::string& name, int64_t n) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_value(n);
}

// y = x + w with w stored outside the model in `location` at byte `offset`.
onnx::ModelProto external_model(const std::string& location, int64_t offset) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  tensor_type(g->add_input(), "x", 3);
  tensor_type(g->add_output(), "y", 3);
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto kv = [&](const char* k, const std::string& v) {
    auto* e = w->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  kv("location", location);
  kv("offset", std::to_string(offset));
  kv("length", "12");
  auto* n = g->add_node();
  n->set_op_type("Add");
  n->set_name("/add");
  n->add_input("x");
  n->add_input("w");
  n->add_output("y");
  return m;
}

std::string save(const onnx::ModelProto& m, const fs::path& p) {
  std::ofstream out(p, std::ios::binary);
  m.SerializeToOstream(&out);
  return p.string();
}

TEST(Import, ExternalDataIsReadAtItsOffset) {
  TempDir d;
  float w[3] = {0.5f, -2.0f, 8.0f};
  {
    std::ofstream bin(d.path / "weights.bin", std::ios::binary);
    bin.write("PADDING!", 8);
    bin.write(reinterpret_cast<const char*>(w), sizeof w);
  }
  Graph g = load_onnx(save(external_model("weights.bin", 8), d.path / "m.onnx"));
  Tensor x(DType::f32, {3});
  for (int k = 0; k < 3; ++k) x.data<float>()[k] = static_cast<float>(k + 1);
  std::vector<RefTensor> y = run_reference(g, {{"x", x}});
  EXPECT_EQ(y[0].f, (std::vector<double>{1.5, 0.0, 11.0}));
}

TEST(Import, MissingExternalDataFileIsNamed) {
  TempDir d;
  std::string msg = testing::error_of([&] { load_onnx(save(external_model("gone.bin", 0), d.path / "m.onnx")); });
  EXPECT_NE(msg.find("initializer 'w'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("gone.bin"), std::string::npos) << msg;
}

TEST(Import, ExternalDataOutsideTheModelFolderIsRefused) {
  TempDir d;
  std::string msg = testing::error_of([&] { load_onnx(save(external_model("../../etc/passwd", 0), d.path / "m.onnx")); });
  EXPECT_NE(msg.find("inside the model's folder"), std::string::npos) << msg;
}

TEST(Import, ShortExternalDataFileIsAnError) {
  TempDir d;
  std::ofstream(d.path / "w.bin", std::ios::binary) << "1234";
  std::string msg = testing::error_of([&] { load_onnx(save(external_model("w.bin", 0), d.path / "m.onnx")); });
  EXPECT_NE(msg.find("too short"), std::string::npos) << msg;
}

// Found by the ONNX loader fuzzer: an initializer declaring 6e10 float32 elements and holding
// none. The data is checked against the shape before anything is allocated.
TEST(Import, InitializerWithHugeDimsAndNoDataIsRefusedWithoutAllocating) {
  std::string msg = testing::error_of([] { load_onnx(LOCKSTEP_TEST_DATA "/bad/initializer_dims_without_data.onnx"); });
  EXPECT_NE(msg.find("has 0 values, shape [122,8,10,10,8,8,2431,4] needs 60739993600"), std::string::npos) << msg;
}

// The fuzzer's find: an opset-11 TopK without its k input read past the node's input list.
TEST(Import, ATopKWithoutItsKInputIsAnErrorNamingTheNode) {
  std::string msg = testing::error_of([] { load_onnx(LOCKSTEP_TEST_DATA "/bad/topk_without_k.onnx"); });
  EXPECT_NE(msg.find("node 'TopK#0' (TopK): from opset 10 k is the second input, and it is not given"),
            std::string::npos)
      << msg;
}

// Nodes listed consumer-first (some tools write them so) are put in order; a cycle is an error.
TEST(Import, NodesOutOfOrderAreSortedAndCyclesRefused) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  tensor_type(g->add_input(), "x", 2);
  tensor_type(g->add_output(), "z", 2);
  auto node = [&](const char* name, const char* in, const char* out) {
    auto* n = g->add_node();
    n->set_op_type("Neg");
    n->set_name(name);
    n->add_input(in);
    n->add_output(out);
  };
  node("/second", "y", "z");
  node("/first", "x", "y");
  Graph ok = import_model(m, "m.onnx", ".");
  ASSERT_EQ(ok.nodes.size(), 2u);
  EXPECT_EQ(ok.nodes[0].name, "/first");
  g->mutable_node(1)->set_input(0, "z");  // /first now reads /second's output: a cycle
  std::string msg = testing::error_of([&] { import_model(m, "m.onnx", "."); });
  EXPECT_NE(msg.find("cycle"), std::string::npos) << msg;
}

TEST(Import, OpsetOutsideTheReadRangeIsUnsupported) {
  onnx::ModelProto m = external_model("w.bin", 0);
  const int newer = kMaxOpset + 1;
  m.mutable_opset_import(0)->set_version(newer);
  try {
    import_model(m, "new.onnx", ".");
    FAIL() << "opset " << newer << " accepted";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("opset " + std::to_string(newer)), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lockstep
