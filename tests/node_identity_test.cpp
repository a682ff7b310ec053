// Stable node ids: an unnamed node is "OpType#k" by its import position, and keeps that id when
// constant folding removes an earlier node, in kernels, pass logs, faults, bisect and reduce.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>

#include "backend/registry.h"
#include "frontend/onnx_export.h"
#include "frontend/onnx_import.h"
#include "graph/builder.h"
#include "graph/cut.h"
#include "runtime/program.h"
#include "test_util.h"
#include "verify/bisect.h"
#include "verify/faults.h"
#include "verify/planted_fault.h"
#include "verify_cli.h"

namespace lockstep {
namespace {

using namespace verify_test;
using testing::error_of;

using testing::row;
using testing::values;

const std::vector<std::string> kIds = {"Add#0", "Mul#1", "Relu#2", "Sigmoid#3"};

// Unnamed nodes: Add#0 of two constants (folded away at compile time), then y = Relu#2(x * c)
// and z = Sigmoid#3(x). Without stable ids folding turned Relu#2 into "Relu#1".
Graph folded_first() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {dim(1), dim(6)});
  int c = b.op("Add", "", {b.initializer("a", row({1, 2, 3, 4, 5, 6})), b.initializer("b", row({1, 1, 1, 1, 1, 1}))});
  b.output(b.op("Relu", "", {b.op("Mul", "", {x, c})}));
  b.output(b.op("Sigmoid", "", {x}));
  return b.finish();
}

TensorMap inputs() { return {{"x", row({-3, 1, -2, 4, 5, -1})}}; }

// The model as ONNX bytes whose nodes carry the given names ("" for none).
std::string onnx_bytes(const Graph& g, const std::vector<std::string>& names) {
  onnx::ModelProto m = export_model(g);
  for (int n = 0; n < m.graph().node_size(); ++n) m.mutable_graph()->mutable_node(n)->set_name(names.at(n));
  std::string bytes;
  m.SerializeToString(&bytes);
  return bytes;
}

Graph import_bytes(const std::string& bytes) {
  onnx::ModelProto m;
  m.ParseFromString(bytes);
  return import_model(m, "test", "");
}

// The folded_first model as an ONNX file with every node unnamed.
std::string unnamed_file() {
  static const std::string path = [] {
    std::string p = (scratch_dir() / "folded_first.onnx").string();
    std::ofstream(p, std::ios::binary) << onnx_bytes(folded_first(), {"", "", "", ""});
    return p;
  }();
  return path;
}

std::vector<std::string> ids_of(const Graph& g) {
  std::vector<std::string> ids;
  for (int n = 0; n < static_cast<int>(g.nodes.size()); ++n) ids.push_back(node_id(g, n));
  return ids;
}

std::vector<Tensor> run_cpu(const Graph& g, const std::string& fault) {
  CompileOptions o;
  o.fault = plant_fault(fault);
  return compile(g, "cpu", o)->run(inputs());
}

TEST(NodeIdentity, UnnamedNodesAreOpTypeAndImportIndex) {
  EXPECT_EQ(ids_of(folded_first()), kIds);
  Graph g = load_onnx(unnamed_file());
  EXPECT_EQ(ids_of(g), kIds);
  for (const Node& n : g.nodes) EXPECT_EQ(n.name, "");
  EXPECT_EQ(g.label(2), "node 'Relu#2' (Relu)");
}

// (a) Kernels and the pass log name the Relu by its import-order id, not its folded position.
TEST(NodeIdentity, KernelsAndPassLogKeepIdsWhenFoldingRemovesAnEarlierNode) {
  std::unique_ptr<Program> p = compile(load_onnx(unnamed_file()), "cpu");
  std::vector<std::string> kernel_nodes;
  for (const Program::GroupValue& gv : p->run_capture(inputs()))
    kernel_nodes.insert(kernel_nodes.end(), gv.nodes.begin(), gv.nodes.end());
  for (const char* id : {"Mul#1", "Relu#2", "Sigmoid#3"})
    EXPECT_NE(std::find(kernel_nodes.begin(), kernel_nodes.end(), id), kernel_nodes.end()) << id;
  for (const std::string& id : kernel_nodes)
    EXPECT_TRUE(id.rfind("output:", 0) == 0 || std::find(kIds.begin(), kIds.end(), id) != kIds.end()) << id;
  std::string log;
  for (const std::string& line : p->pass_log()) log += line + "\n";
  EXPECT_NE(log.find("fold-constants: computed Add at compile time (Add#0)"), std::string::npos) << log;
  EXPECT_NE(log.find("Relu#2"), std::string::npos) << log;
  for (const char* shifted : {"Mul#0", "Relu#1", "Sigmoid#2"}) EXPECT_EQ(log.find(shifted), std::string::npos) << log;
}

// (b) kernel:Relu#2 changes Relu#2's output and nothing else.
TEST(NodeIdentity, KernelFaultByIdLandsOnThatNode) {
  Graph g = load_onnx(unnamed_file());
  std::vector<Tensor> clean = run_cpu(g, ""), faulty = run_cpu(g, "kernel:Relu#2");
  EXPECT_NE(values(faulty[0]), values(clean[0]));
  EXPECT_EQ(values(faulty[1]), values(clean[1]));
  std::vector<Tensor> sigmoid = run_cpu(g, "kernel:Sigmoid#3");
  EXPECT_EQ(values(sigmoid[0]), values(clean[0]));
  EXPECT_NE(values(sigmoid[1]), values(clean[1]));
}

// (c) bisect --by node names the node the fault was planted on.
TEST(NodeIdentity, BisectByNodeNamesTheFaultyNodeById) {
  CliResult r = lockstep({"bisect", unnamed_file(), "--by", "node", "--target", "cpu", "--inject-fault", "kernel:Relu#2"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(r.line("verdict: ").rfind("node Relu#2 (", 0), 0u) << r.out;
}

// (d) An id the model lacks (here the folded position the Relu had) is refused, naming the ids.
TEST(NodeIdentity, UnknownIdIsRefusedWithTheIdsThatExist) {
  Graph g = load_onnx(unnamed_file());
  std::string msg = error_of([&] { check_fault_applies("kernel:Relu#1", g); });
  EXPECT_NE(msg.find("no node named 'Relu#1'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("the Relu nodes: Relu#2"), std::string::npos) << msg;
  CliResult r = lockstep({"run", unnamed_file(), "--inject-fault", "uninit:Relu#1"});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("the Relu nodes: Relu#2"), std::string::npos) << r.err;
}

// (e) Repeated ONNX names, and a name that looks like a generated id, give distinct ids: names
// claim first in node order, a taken id gets "~2", "~3", ...
TEST(NodeIdentity, RepeatedOnnxNamesGetDistinctIds) {
  Graph g = import_bytes(onnx_bytes(folded_first(), {"dup", "Relu#2", "dup", ""}));
  EXPECT_EQ(ids_of(g), (std::vector<std::string>{"dup", "Relu#2", "dup~2", "Sigmoid#3"}));
  EXPECT_EQ(g.nodes[2].name, "dup");
  EXPECT_NO_THROW(verify_graph(g));
  std::vector<Tensor> clean = run_cpu(g, ""), faulty = run_cpu(g, "kernel:dup~2");
  EXPECT_NE(values(faulty[0]), values(clean[0]));  // the second "dup", the Relu
  Graph twice = import_bytes(onnx_bytes(folded_first(), {"", "", "Sigmoid#3", ""}));
  EXPECT_EQ(ids_of(twice), (std::vector<std::string>{"Add#0", "Mul#1", "Sigmoid#3", "Sigmoid#3~2"}));
}

TEST(NodeIdentity, VerifyGraphRefusesMissingAndRepeatedIds) {
  Graph g = folded_first();
  g.nodes[3].id = "Relu#2";
  EXPECT_NE(error_of([&] { verify_graph(g); }).find("node 'Relu#2' (Sigmoid): another node has the same id"),
            std::string::npos);
  g.nodes[3].id.clear();
  EXPECT_NE(error_of([&] { verify_graph(g); }).find("node #3 (Sigmoid) has no id"), std::string::npos);
}

// Cuts, isolated subgraphs and exported-then-imported models keep the ids.
TEST(NodeIdentity, CutsSubgraphsAndExportedModelsKeepIds) {
  Graph g = load_onnx(unnamed_file());
  Graph cut = cut_at(g, {"Relu#2"});  // a cut by id
  EXPECT_EQ(ids_of(cut), (std::vector<std::string>{"Add#0", "Mul#1", "Relu#2"}));
  Isolated relu = isolate(g, {2}, {{"Mul_1_output_0", row({1, 2, 3, 4, 5, 6})}});
  EXPECT_EQ(ids_of(relu.graph), (std::vector<std::string>{"Relu#2"}));
  onnx::ModelProto m = export_model(relu.graph);
  EXPECT_EQ(m.graph().node(0).name(), "Relu#2");  // an unnamed node is exported under its id
  EXPECT_EQ(ids_of(import_bytes(m.SerializeAsString())), (std::vector<std::string>{"Relu#2"}));
}

TEST(NodeIdentity, DerivedIdsNameTheirOriginAndStayUnique) {
  Graph g = folded_first();
  EXPECT_EQ(derived_node_id(g, 2, "Cast"), "Relu#2/Cast");
  g.nodes[3].id = "Relu#2/Cast";
  EXPECT_EQ(derived_node_id(g, 2, "Cast"), "Relu#2/Cast~2");
}

// reduce maps the first diverging group's ids to positions by lookup and writes a bundle whose
// model re-imports with the same id.
TEST(NodeIdentity, ReduceNamesTheFaultyNodeAndItsBundleKeepsTheId) {
  fs::path bundle = scratch_dir() / "identity_bundle";
  CliResult r = lockstep({"reduce", unnamed_file(), "--target", "cpu", "--inject-fault", "kernel:Relu#2", "-o",
                          bundle.string()});
  ASSERT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.line("verdict: ").find("Relu#2"), std::string::npos) << r.out;
  Graph m = load_onnx((bundle / "model.onnx").string());
  EXPECT_NE(m.find_node("Relu#2"), -1);
}

}  // namespace
}  // namespace lockstep
