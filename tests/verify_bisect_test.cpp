// `lockstep bisect`: isolated subgraphs, and one `--by all` per planted fault class on the full
// generated decoder naming the right stage, node or pass application within ceil(log2 n) + 3
// compiles; no fault: agreement and exit 0.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "backend/registry.h"
#include "graph/builder.h"
#include "ref/interpreter.h"
#include "runtime/program.h"
#include "test_util.h"
#include "verify/bisect.h"
#include "verify_cli.h"

namespace lockstep {
namespace {

using namespace verify_test;

using testing::row;

// a = x * c; b = tanh(a); y = b + x.
Graph chain() {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {dim(1), dim(3)});
  int a = b.op("Mul", "mul", {x, b.initializer("c", row({2, 3, 4}))});
  int t = b.op("Tanh", "tanh", {a});
  b.output(b.op("Add", "add", {t, x}));
  return b.finish();
}

TEST(VerifyBisect, IsolatedNodesReadOutsideValuesAsInputsAndKeepInitializers) {
  Graph g = chain();
  Tensor a = row({0.5f, -1, 2});
  Isolated tanh = isolate(g, {1}, {{"mul_output_0", a}});
  ASSERT_EQ(tanh.graph.nodes.size(), 1u);
  ASSERT_EQ(tanh.graph.inputs.size(), 1u);
  EXPECT_EQ(tanh.graph.values[tanh.graph.inputs[0]].name, "mul_output_0");
  std::vector<RefTensor> out = run_reference(tanh.graph, tanh.inputs);
  for (int k = 0; k < 3; ++k) EXPECT_DOUBLE_EQ(out[0].f[k], std::tanh(static_cast<double>(a.data<float>()[k])));
  Isolated mul = isolate(g, {0}, {{"x", row({1, 1, 1})}});
  ASSERT_EQ(mul.graph.inputs.size(), 1u);  // c stays an initializer
  EXPECT_EQ(run_reference(mul.graph, mul.inputs)[0].f, (std::vector<double>{2, 3, 4}));
}

// Nodes isolated from a model with a named length compile as the model does, one program for
// every length: a bug of the symbolic program (PoCL once ran a symbolic opencl kernel wrong
// that ran right compiled for the one length) then shows alone too.
TEST(VerifyBisect, AnIsolatedInputKeepsItsNamedLength) {
  GraphBuilder b;
  int x = b.input("x", DType::f32, {dim(1), dim(3), dim("T")});
  b.output(b.op("Tanh", "tanh", {x}));
  Graph g = b.finish();
  Tensor x5(DType::f32, {1, 3, 5});
  for (int64_t k = 0; k < x5.numel(); ++k) x5.data<float>()[k] = 0.1f * static_cast<float>(k);
  Isolated tanh = isolate(g, {0}, {{"x", x5}});
  const std::vector<Dim>& d = tanh.graph.values[tanh.graph.inputs[0]].declared;
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].value, 1);
  EXPECT_EQ(d[1].value, 3);
  EXPECT_EQ(d[2].symbol, "T");
  EXPECT_FALSE(d[2].known());
  std::unique_ptr<Program> p = compile(tanh.graph, "cpu");
  std::vector<Tensor> out = p->run(tanh.inputs);
  EXPECT_TRUE(p->stats().symbolic) << p->stats().note;
  ASSERT_EQ(out[0].shape, (Shape{1, 3, 5}));
  for (int64_t k = 0; k < 15; ++k) EXPECT_FLOAT_EQ(out[0].data<float>()[k], std::tanh(0.1f * static_cast<float>(k)));
}

TEST(VerifyBisect, PassRecordParsesIntoNumberPassAndNodes) {
  PassApplication a = parse_pass_record("#141 fuse-epilogue: k486 into k485 (/dec/a/Conv, /dec/a/Add)");
  EXPECT_EQ(a.number, 141);
  EXPECT_EQ(a.pass, "fuse-epilogue");
  EXPECT_EQ(a.nodes, (std::vector<std::string>{"/dec/a/Conv", "/dec/a/Add"}));
}

struct Bisected {
  CliResult r;
  std::string verdict;
  int compiles = -1;
};

Bisected bisect_decoder(const std::string& fault, const std::string& target = "cpu") {
  Bisected b;
  std::vector<std::string> args = {"bisect", model_file("decoder128"), "--target", target, "--by", "all", "--seed-inputs", "vits"};
  if (!fault.empty()) args.insert(args.end(), {"--inject-fault", fault});
  b.r = lockstep(args);
  b.verdict = b.r.line("verdict: ");
  std::string c = b.r.line("compiles: ");
  if (!c.empty()) b.compiles = std::stoi(c);
  std::cout << "bisect " << target << " " << (fault.empty() ? "no fault" : fault) << ": " << b.verdict << " [" << c
            << " compiles]\n";  // tools/gpu-check.sh tabulates these
  return b;
}

int budget(int n) { return static_cast<int>(std::ceil(std::log2(n))) + 3; }

const int kDecoderNodes = static_cast<int>(decoder128().nodes.size());

// Every stage runs on a model that agrees (the decoder's agreement is `check`'s test).
TEST(VerifyBisect, Graph174WithoutFaultAgreesAndExitsZero) {
  CliResult r = lockstep({"bisect", model_file("g174"), "--by", "all", "--seed-inputs", "vits"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.line("verdict: "), "agree: no stage, node or pass diverges") << r.out;
  for (const char* stage : {"constants", "kernels", "readback", "cache on/off", "run-to-run", "in-process compiles", "A-B-A"})
    EXPECT_NE(r.out.find(std::string(stage) + " "), std::string::npos) << stage;
}

// The runtime and kernel fault classes on the full decoder, on each target (cuda where it runs):
// an exhaustive form. The default tier runs them on cpu, but for cache-by-name (about ten decoder
// compiles); each class's 174-node form, on every target, is CheckFaults' (verify_check_test.cpp).
class DecoderFaults : public testing::OnEachTarget {
 protected:
  void SetUp() override {
    testing::OnEachTarget::SetUp();
    if (!IsSkipped() && GetParam() != "cpu") SKIP_UNLESS_FULL("the decoder's fault classes off cpu");
  }
};
INSTANTIATE_TEST_SUITE_P(Targets, DecoderFaults, ::testing::ValuesIn(testing::compiled_targets()),
                         [](const auto& i) { return testing::param_name(i.param); });

TEST_P(DecoderFaults, KernelFaultNamesTheNodeAndNoPass) {
  Bisected b = bisect_decoder("kernel:/dec/resblocks.4/convs1.1/Conv", GetParam());
  EXPECT_EQ(b.r.status, 1) << b.r.err;
  EXPECT_EQ(b.verdict.rfind("stage kernels: ", 0), 0u) << b.verdict;
  EXPECT_NE(b.verdict.find("; node /dec/resblocks.4/convs1.1/Conv ("), std::string::npos) << b.verdict;
  EXPECT_NE(b.verdict.find("no pass: it diverges with --pass-limit 0"), std::string::npos) << b.verdict;
  EXPECT_GE(b.compiles, 1);
  EXPECT_LE(b.compiles, budget(kDecoderNodes)) << b.r.out;
}

TEST_P(DecoderFaults, UninitFaultNamesTheNodeAndItsUnwrittenOutput) {
  Bisected b = bisect_decoder("uninit:/dec/ups.1/ConvTranspose", GetParam());
  EXPECT_EQ(b.r.status, 1) << b.r.err;
  EXPECT_EQ(b.verdict.rfind("stage kernels: ", 0), 0u) << b.verdict;
  EXPECT_NE(b.verdict.find("; node /dec/ups.1/ConvTranspose leaves part of its output unwritten"), std::string::npos)
      << b.verdict;
  EXPECT_LE(b.compiles, budget(kDecoderNodes)) << b.r.out;
}

// The pass application the verdict must name: "pass #N NAME (NODES)", from the model's own log.
std::string named_application(const Graph& g, const TensorMap& in, int n, const std::string& target = "cpu") {
  auto p = compile(g, target);
  p->prepare(in);
  std::vector<std::string> log = p->pass_log();
  if (static_cast<int>(log.size()) < n) return "";
  PassApplication want = parse_pass_record(log[n - 1]);
  std::string named = "pass #" + std::to_string(n) + " " + want.pass + " (";
  for (size_t k = 0; k < want.nodes.size(); ++k) named += (k ? ", " : "") + want.nodes[k];
  return named + ")";
}

int pass_applications(const Graph& g, const TensorMap& in, const std::string& target = "cpu") {
  auto p = compile(g, target);
  p->prepare(in);
  return static_cast<int>(p->pass_log().size());
}

void expect_pass_found(const Bisected& b, const std::string& named, int applications) {
  EXPECT_EQ(b.r.status, 1) << b.r.err;
  ASSERT_FALSE(named.empty());
  EXPECT_NE(b.verdict.find(named), std::string::npos) << "want '" << named << "' in: " << b.verdict;
  EXPECT_NE(b.verdict.find("agrees alone on the reference's inputs"), std::string::npos) << b.verdict;
  EXPECT_LE(b.compiles, budget(applications)) << b.r.out;
}

// On the first coupling layer's 15-node cut: #6 fuses /flow/flows.6/pre/Conv's epilogue.
TEST(VerifyBisect, PassFaultNamesTheApplication) {
  Graph g = graph15();
  TensorMap in = vits::seed_inputs(g, 1024);
  Bisected b;
  b.r = lockstep({"bisect", model_file("g15"), "--by", "all", "--seed-inputs", "vits", "--inject-fault", "pass:6"});
  b.verdict = b.r.line("verdict: ");
  b.compiles = std::stoi("0" + b.r.line("compiles: "));
  expect_pass_found(b, named_application(g, in, 6), pass_applications(g, in));
}

// The same on the full decoder: about ten decoder compiles at other pass limits, about 140 s
// with an empty kernel cache on cpu, so it runs in the exhaustive tier (ctest -L full);
// tools/gpu-check.sh runs it on cuda.
TEST_P(DecoderFaults, PassFaultOnTheFullDecoderNamesTheApplication) {
  SKIP_UNLESS_FULL("ten decoder compiles");
  Graph g = decoder128();
  TensorMap in = vits::seed_inputs(g, 128);
  expect_pass_found(bisect_decoder("pass:141", GetParam()), named_application(g, in, 141, GetParam()),
                    pass_applications(g, in, GetParam()));
}

// Staging slots rewritten before their copies ran: the upload itself is corrupted, on every
// target (the decoder's 300-odd uploads wrap the default ring of 64 slots).
TEST_P(DecoderFaults, StagingReuseNamesTheConstantsStageAndItsReaders) {
  Bisected b = bisect_decoder("staging-reuse", GetParam());
  EXPECT_EQ(b.r.status, 1) << b.r.err;
  const std::string head = "stage constants: resident bytes differ from the host after upload: '";
  ASSERT_EQ(b.verdict.rfind(head, 0), 0u) << b.verdict;
  std::string constant = b.verdict.substr(head.size(), b.verdict.find('\'', head.size()) - head.size());
  // The named constant is an initializer of the model. Every node named reads an initializer,
  // and when the list is whole (one corrupted constant) it names each reader of it.
  Graph g = decoder128();
  int v = g.find_value(constant);
  ASSERT_GE(v, 0) << constant;
  EXPECT_TRUE(g.values[v].initializer);
  std::string readers = b.verdict.substr(b.verdict.find("read by ") + 8);
  bool whole = readers.find(" in all)") == std::string::npos;
  int named = 0;
  for (const Node& n : g.nodes) {
    bool reads_it = std::find(n.inputs.begin(), n.inputs.end(), v) != n.inputs.end();
    bool is_named = readers.find(n.name + ",") != std::string::npos || readers.find(n.name + ")") != std::string::npos;
    if (whole && reads_it) {
      EXPECT_TRUE(is_named) << n.name;
    }
    if (!is_named) continue;
    ++named;
    bool reads_constant = false;
    for (int in : n.inputs) reads_constant |= in >= 0 && g.values[in].initializer;
    EXPECT_TRUE(reads_constant) << n.name << " is named but reads no constant";
  }
  EXPECT_GT(named, 0) << readers;
  EXPECT_EQ(b.compiles, 1);
}

TEST_P(DecoderFaults, CacheByNameNamesTheAbaStage) {
  SKIP_UNLESS_FULL("the decoder's A-B-A compiles");
  Bisected b = bisect_decoder("cache-by-name", GetParam());
  EXPECT_EQ(b.r.status, 1) << b.r.err;
  EXPECT_EQ(b.verdict.rfind("stage A-B-A: ", 0), 0u) << b.verdict;
  EXPECT_NE(b.verdict.find("B after A: failed"), std::string::npos) << b.verdict;
  // Every earlier stage ran and agreed; only A-B-A differs.
  std::map<std::string, std::string> status;
  std::stringstream ss(b.r.out);
  for (std::string l; std::getline(ss, l);) {
    std::stringstream cols(l);
    std::string target, stage, word;
    cols >> target;
    if (target != GetParam()) continue;
    while (cols >> word && word != "agree" && word != "DIFFER" && word != "skipped") stage += (stage.empty() ? "" : " ") + word;
    status[stage] = word;
  }
  for (const char* stage : {"constants", "kernels", "readback", "cache on/off", "run-to-run", "in-process compiles"})
    EXPECT_EQ(status[stage], "agree") << stage << "\n" << b.r.out;
  EXPECT_EQ(status["A-B-A"], "DIFFER") << b.r.out;
  EXPECT_LE(b.compiles, budget(kDecoderNodes)) << b.r.out;
}

// Node mode (b): prefix cuts with binary search, a table of anchor node -> cosine.
TEST(VerifyBisect, PrefixCutsFindTheNodeInLogCompiles) {
  CliResult r = lockstep({"bisect", model_file("g174"), "--by", "node", "--cuts", "--seed-inputs", "vits",
                          "--inject-fault", "kernel:/flow/flows.2/enc/in_layers.1/Conv"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.line("verdict: ").rfind("node /flow/flows.2/enc/in_layers.1/Conv (", 0), 0u) << r.out;
  int cuts = 0;
  for (size_t at = r.out.find(" cut "); at != std::string::npos; at = r.out.find(" cut ", at + 1)) ++cuts;
  EXPECT_GE(cuts, 1);
  EXPECT_LE(cuts, static_cast<int>(std::ceil(std::log2(174))));
  EXPECT_LE(std::stoi(r.line("compiles: ")), budget(174));
}

TEST(VerifyBisect, HelpExplainsModesMetricsAndExitStatus) {
  CliResult r = lockstep({"bisect", "--help"});
  EXPECT_EQ(r.status, 0);
  for (const char* want : {"--by stage", "--by node", "--by pass", "--by all", "#N pass-name", "cosine", "rel_l2",
                           "Exit status: 0"})
    EXPECT_NE(r.out.find(want), std::string::npos) << want;
}

}  // namespace
}  // namespace lockstep
