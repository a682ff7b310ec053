// ONNX export and prefix cuts: build -> export -> import keeps nodes, attributes and bytes;
// cut_at keeps exactly what the chosen values depend on.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "core/error.h"
#include "frontend/onnx_export.h"
#include "frontend/onnx_import.h"
#include "graph/builder.h"
#include "graph/cut.h"
#include "ops/infer.h"
#include "vits.h"

using namespace lockstep;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("lockstep_export_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

Tensor f32(Shape shape, std::vector<float> v) {
  Tensor t(DType::f32, std::move(shape));
  std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
  return t;
}

Tensor i64(std::vector<int64_t> v) {
  Tensor t(DType::i64, {static_cast<int64_t>(v.size())});
  std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
  return t;
}

std::string value_name(const Graph& g, int v) { return v < 0 ? "" : g.values[v].name; }

// Attribute equality as ONNX stores them (floats are float32 there).
void expect_same_attr(const Attr& a, const Attr& b, const std::string& what) {
  ASSERT_EQ(a.kind, b.kind) << what;
  EXPECT_EQ(a.i, b.i) << what;
  EXPECT_EQ(static_cast<float>(a.f), static_cast<float>(b.f)) << what;
  EXPECT_EQ(a.s, b.s) << what;
  EXPECT_EQ(a.ints, b.ints) << what;
  ASSERT_EQ(a.floats.size(), b.floats.size()) << what;
  for (size_t k = 0; k < a.floats.size(); ++k)
    EXPECT_EQ(static_cast<float>(a.floats[k]), static_cast<float>(b.floats[k])) << what;
  EXPECT_EQ(a.strings, b.strings) << what;
  ASSERT_EQ(a.t == nullptr, b.t == nullptr) << what;
  if (a.t) {
    EXPECT_EQ(a.t->dtype, b.t->dtype) << what;
    EXPECT_EQ(a.t->shape, b.t->shape) << what;
    EXPECT_EQ(a.t->bytes, b.t->bytes) << what;
  }
}

// Same nodes (names, ops, wiring by value name, attributes), inputs, outputs and initializers.
void expect_same_graph(const Graph& a, const Graph& b) {
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (size_t n = 0; n < a.nodes.size(); ++n) {
    const Node &x = a.nodes[n], &y = b.nodes[n];
    std::string what = x.name + " (" + x.op_type + ")";
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.op_type, y.op_type) << what;
    EXPECT_EQ(x.domain, y.domain) << what;
    ASSERT_EQ(x.inputs.size(), y.inputs.size()) << what;
    for (size_t k = 0; k < x.inputs.size(); ++k) EXPECT_EQ(value_name(a, x.inputs[k]), value_name(b, y.inputs[k])) << what;
    ASSERT_EQ(x.outputs.size(), y.outputs.size()) << what;
    for (size_t k = 0; k < x.outputs.size(); ++k) EXPECT_EQ(value_name(a, x.outputs[k]), value_name(b, y.outputs[k])) << what;
    ASSERT_EQ(x.attrs.size(), y.attrs.size()) << what;
    for (const auto& [key, attr] : x.attrs) {
      ASSERT_TRUE(y.has(key)) << what << " " << key;
      expect_same_attr(attr, *y.attr(key), what + " " + key);
    }
  }
  ASSERT_EQ(a.inputs.size(), b.inputs.size());
  for (size_t k = 0; k < a.inputs.size(); ++k) {
    const Value &x = a.values[a.inputs[k]], &y = b.values[b.inputs[k]];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.type.dtype, y.type.dtype);
    ASSERT_EQ(x.declared.size(), y.declared.size());
    for (size_t d = 0; d < x.declared.size(); ++d) {
      EXPECT_EQ(x.declared[d].value, y.declared[d].value);
      EXPECT_EQ(x.declared[d].symbol, y.declared[d].symbol);
    }
  }
  ASSERT_EQ(a.outputs.size(), b.outputs.size());
  for (size_t k = 0; k < a.outputs.size(); ++k) EXPECT_EQ(value_name(a, a.outputs[k]), value_name(b, b.outputs[k]));
  int inits = 0;
  for (const Value& v : a.values) {
    if (!v.initializer) continue;
    ++inits;
    int w = b.find_value(v.name);
    ASSERT_GE(w, 0) << v.name;
    ASSERT_TRUE(b.values[w].initializer) << v.name;
    EXPECT_EQ(v.initializer->dtype, b.values[w].initializer->dtype) << v.name;
    EXPECT_EQ(v.initializer->shape, b.values[w].initializer->shape) << v.name;
    EXPECT_EQ(v.initializer->bytes, b.values[w].initializer->bytes) << v.name;
  }
  int b_inits = 0;
  for (const Value& v : b.values) b_inits += v.initializer != nullptr;
  EXPECT_EQ(inits, b_inits);
}

Graph round_trip(const Graph& g, const ExportOptions& opts = {}) {
  onnx::ModelProto m = export_model(g, opts);
  std::string bytes;
  EXPECT_TRUE(m.SerializeToString(&bytes));
  onnx::ModelProto back;
  EXPECT_TRUE(back.ParseFromString(bytes));
  return import_model(back, "round-trip", "");
}

// A graph with every attribute kind the importer accepts, omitted inputs, ints and floats.
Graph small_graph() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {dim(1), dim(3), dim("T")});
  int w = b.initializer("conv.weight", f32({2, 3, 3}, {1, -2, 3, 4, 5, 6, 7, 8, 9, 0.5f, 0.25f, 0.125f, 1, 1, 1, 2, 2, 2}));
  int c = b.op("Conv", "/conv/Conv", {x, w, -1},
               {{"pads", attr_ints({1, 1})}, {"kernel_shape", attr_ints({3})}, {"auto_pad", attr_string("NOTSET")}});
  int l = b.op("LeakyRelu", "/LeakyRelu", {c}, {{"alpha", attr_float(0.1)}});
  int k = b.op("Constant", "/Constant", {}, {{"value", attr_tensor(i64({0, 2, std::numeric_limits<int64_t>::min()}))}});
  int s = b.op("Constant", "/Constant_1", {}, {{"value_floats", attr_floats({0.5, -1.25})}});
  std::vector<int> parts = b.node("Split", "/Split", {l, b.initializer("sizes", i64({1, 1}))}, {{"axis", attr_int(1)}}, 2);
  int y = b.op("Mul", "/Mul", {parts[1], parts[0]});
  b.output(y);
  b.output(k);
  b.output(s);
  return b.finish();
}

}  // namespace

TEST(Export, RoundTripKeepsNodesAttributesAndBytes) {
  Graph g = small_graph();
  Graph back = round_trip(g);
  expect_same_graph(g, back);
  EXPECT_EQ(back.ir_version, 8);
  EXPECT_EQ(back.opset, 17);
  // Output types come from shape inference when the builder left them open.
  EXPECT_EQ(back.values[back.outputs[0]].type.str(), "float32[1,1,?]");
  EXPECT_EQ(back.values[back.outputs[1]].type.str(), "int64[3]");
}

TEST(Export, WritesEveryAttributeKindIntoTheProto) {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {dim(2)});
  Attrs all{{"i", attr_int(-7)},           {"f", attr_float(0.1)},
            {"s", attr_string("NOTSET")},  {"is", attr_ints({1, -2})},
            {"fs", attr_floats({0.5, 2})}, {"ss", attr_strings({"tanh", "sigmoid"})},
            {"t", attr_tensor(f32({2}, {3, 4}))}};
  b.output(b.op("Custom", "n", {x}, all), DType::f32, {dim(2)});
  onnx::ModelProto m = export_model(b.finish());
  const auto& node = m.graph().node(0);
  std::map<std::string, const onnx::AttributeProto*> by;
  for (const auto& a : node.attribute()) by[a.name()] = &a;
  ASSERT_EQ(by.size(), 7u);
  EXPECT_EQ(by["i"]->type(), onnx::AttributeProto::INT);
  EXPECT_EQ(by["i"]->i(), -7);
  EXPECT_EQ(by["f"]->f(), 0.1f);
  EXPECT_EQ(by["s"]->s(), "NOTSET");
  EXPECT_EQ(by["is"]->ints_size(), 2);
  EXPECT_EQ(by["is"]->ints(1), -2);
  EXPECT_EQ(by["fs"]->floats(1), 2.0f);
  EXPECT_EQ(by["ss"]->strings(1), "sigmoid");
  EXPECT_EQ(by["t"]->type(), onnx::AttributeProto::TENSOR);
  EXPECT_EQ(by["t"]->t().data_type(), 1);
  EXPECT_EQ(by["t"]->t().raw_data().size(), 8u);
  EXPECT_EQ(m.graph().output(0).type().tensor_type().shape().dim(0).dim_value(), 2);
}

TEST(Export, OptionsAndDeclaredDims) {
  Graph g = small_graph();
  ExportOptions o;
  o.ir_version = 10;
  o.opset = 20;
  o.value_info = true;
  onnx::ModelProto m = export_model(g, o);
  EXPECT_EQ(m.ir_version(), 10);
  ASSERT_EQ(m.opset_import_size(), 1);
  EXPECT_EQ(m.opset_import(0).version(), 20);
  EXPECT_EQ(m.graph().input(0).type().tensor_type().shape().dim(2).dim_param(), "T");
  EXPECT_EQ(m.graph().initializer(0).raw_data().size(), 18u * 4);
  // value_info for node outputs that are not graph outputs: Conv, LeakyRelu, two Split halves.
  EXPECT_EQ(m.graph().value_info_size(), 4);
  EXPECT_EQ(import_model(m, "opts", "").opset, 20);
}

TEST(Export, SaveIsAtomicAndReplacesTheFile) {
  TempDir dir;
  std::string path = (dir.path / "m.onnx").string();
  { std::ofstream(path) << "old contents"; }
  Graph g = small_graph();
  save_onnx(g, path);
  expect_same_graph(g, load_onnx(path));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator{}), 1);  // no temp left
  EXPECT_THROW(save_onnx(g, (dir.path / "missing" / "m.onnx").string()), Error);
}

TEST(Export, UnwritableAttributeIsAnError) {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {dim(1)});
  Attr odd;  // Attr::Unsupported, as import leaves a graph attribute
  b.output(b.op("Relu", "r", {x}, {{"g", odd}}), DType::f32, {dim(1)});
  try {
    export_model(b.finish());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'r' (Relu)"), std::string::npos) << e.what();
  }
}

TEST(Export, VitsSeedFlowRoundTrips) {
  vits::Config c;
  c.T = -1;
  Graph g = vits::build(c);
  TempDir dir;
  std::string path = (dir.path / "flow.onnx").string();
  save_onnx(g, path, vits::export_options(c));
  expect_same_graph(g, load_onnx(path));
  c.dynamo = true;
  c.part = vits::Part::dec;
  c.dec.upsample_initial = 32;
  Graph d = vits::build(c);
  Graph back = round_trip(d, vits::export_options(c));
  expect_same_graph(d, back);
  EXPECT_EQ(back.ir_version, 10);
  EXPECT_EQ(back.opset, 20);
}

// ---- cut_at -------------------------------------------------------------------------------

TEST(Cut, KeepsOnlyWhatTheTargetsNeed) {
  Graph g = small_graph();
  Graph c = cut_at(g, {"/LeakyRelu"});  // a node name: its first output
  ASSERT_EQ(c.nodes.size(), 2u);
  EXPECT_EQ(c.nodes[0].name, "/conv/Conv");
  EXPECT_EQ(c.nodes[1].name, "/LeakyRelu");
  ASSERT_EQ(c.outputs.size(), 1u);
  EXPECT_EQ(c.values[c.outputs[0]].name, "/LeakyRelu_output_0");
  ASSERT_EQ(c.inputs.size(), 1u);
  EXPECT_GE(c.find_value("conv.weight"), 0);
  EXPECT_EQ(c.find_value("sizes"), -1);  // the Split's initializer is not needed
  verify_graph(c);
}

TEST(Cut, ValueNamesSeveralTargetsAndMultiOutputNodes) {
  Graph g = small_graph();
  Graph c = cut_at(g, {"/Split_output_1", "/Constant", "/Split_output_1"});
  ASSERT_EQ(c.outputs.size(), 2u);  // duplicates collapse
  EXPECT_EQ(c.values[c.outputs[0]].name, "/Split_output_1");
  EXPECT_EQ(c.values[c.outputs[1]].name, "/Constant_output_0");
  ASSERT_EQ(c.nodes.size(), 4u);  // Conv, LeakyRelu, Constant, Split; not Mul, not Constant_1
  EXPECT_EQ(c.nodes[3].outputs.size(), 2u);  // the Split keeps both outputs
  GraphTypes t = infer_graph(c);
  EXPECT_EQ(t.type[c.outputs[0]].str(), "float32[1,1,?]");
}

TEST(Cut, GraphInputAsTarget) {
  Graph c = cut_at(small_graph(), {"x"});
  EXPECT_TRUE(c.nodes.empty());
  ASSERT_EQ(c.outputs.size(), 1u);
  EXPECT_EQ(c.outputs[0], c.inputs[0]);
}

TEST(Cut, UnknownNamesAreNamedInOneError) {
  try {
    cut_at(small_graph(), {"/Mul", "nope", "/conv/Conv", "also/missing"});
    FAIL() << "no error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("'nope'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'also/missing'"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("/Mul"), std::string::npos) << msg;
  }
  EXPECT_THROW(cut_at(small_graph(), {}), Error);
}

TEST(Cut, ExportedCutImportsAndInfers) {
  vits::Config c;
  c.T = 64;
  Graph cut = vits::build_cut(c, {"/flow/flows.4/enc/res_skip_layers.3/Conv"});
  Graph back = round_trip(cut);
  EXPECT_EQ(back.nodes.size(), cut.nodes.size());
  EXPECT_EQ(back.values[back.outputs[0]].type.str(), "float32[1,72,64]");
}
