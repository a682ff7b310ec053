// `lockstep reduce`: a planted node fault in the 174-node graph shrinks to a model of
// at most 5 nodes that still fails, and the bundle's README command reproduces it from a
// fresh shell.
#include <gtest/gtest.h>

#include <algorithm>

#include "frontend/onnx_import.h"
#include "ref/interpreter.h"
#include "verify/compare.h"
#include "verify_cli.h"

namespace lockstep {
namespace {

using namespace verify_test;

std::string readme_command(const fs::path& bundle) {
  std::string readme = slurp(bundle / "README.md");
  size_t at = readme.find("```sh\n");
  if (at == std::string::npos) return "";
  at += 6;
  return readme.substr(at, readme.find("\n```", at) - at);
}

TEST(VerifyReduce, PlantedKernelFaultIn174ShrinksToAFailingBundle) {
  const std::string node = "/flow/flows.2/enc/in_layers.2/Conv";
  fs::path bundle = scratch_dir() / "bundle";
  CliResult r = lockstep({"reduce", model_file("g174"), "--target", "cpu", "--seed-inputs", "vits", "--inject-fault",
                          "kernel:" + node, "-o", bundle.string()});
  ASSERT_EQ(r.status, 1) << r.out << r.err;

  Graph m = load_onnx((bundle / "model.onnx").string());
  EXPECT_GE(m.nodes.size(), 1u);
  EXPECT_LE(m.nodes.size(), 5u);
  EXPECT_TRUE(std::any_of(m.nodes.begin(), m.nodes.end(), [&](const Node& n) { return n.name == node; }));

  // The bundle's reference outputs are what the float64 interpreter gives on its inputs.
  TensorMap in;
  for (size_t k = 0; k < m.inputs.size(); ++k)
    in[m.values[m.inputs[k]].name] = load_tensor_pb((bundle / "test_data_set_0" / ("input_" + std::to_string(k) + ".pb")).string());
  std::vector<RefTensor> ref = run_reference(m, in);
  ASSERT_EQ(ref.size(), m.outputs.size());
  for (size_t k = 0; k < ref.size(); ++k) {
    Tensor want = load_tensor_pb((bundle / "test_data_set_0" / ("output_" + std::to_string(k) + ".pb")).string());
    EXPECT_EQ(allclose_mismatch(to_ref(want), ref[k], 1e-6, 1e-7), "") << k;
  }

  // The README's command, from a fresh shell with an empty environment: still fails.
  std::string cmd = readme_command(bundle);
  ASSERT_NE(cmd.find(" check "), std::string::npos) << cmd;
  ASSERT_NE(cmd.find("kernel:" + node), std::string::npos) << cmd;
  std::string home = std::getenv("HOME") ? std::getenv("HOME") : "/tmp";
  CliResult repro = shell("cd / && env -i PATH=/usr/bin:/bin HOME=" + shell_quote(home) + " bash -c " + shell_quote(cmd));
  EXPECT_EQ(repro.status, 1) << repro.out << repro.err;
  EXPECT_NE(repro.out.find("FAIL"), std::string::npos) << repro.out;

  // Without the planted fault the same bundle agrees: the reduction kept the bug, not noise.
  std::string clean = cmd.substr(0, cmd.find(" --inject-fault"));
  CliResult ok = shell("cd / && bash -c " + shell_quote(clean));
  EXPECT_EQ(ok.status, 0) << clean << "\n" << ok.out << ok.err;
}

// The first diverging group fuses five nodes (two Slices, Tanh, Sigmoid, Mul); ddmin keeps the one
// whose kernel carries the fault.
TEST(VerifyReduce, DdminShrinksAFusedGroupToTheFaultyNode) {
  fs::path bundle = scratch_dir() / "gate";
  CliResult r = lockstep({"reduce", model_file("g174"), "--seed-inputs", "vits", "--inject-fault",
                          "kernel:/flow/flows.0/enc/Tanh", "-o", bundle.string()});
  ASSERT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("seed: fusion group k"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(5 nodes)"), std::string::npos) << r.out;
  Graph m = load_onnx((bundle / "model.onnx").string());
  ASSERT_EQ(m.nodes.size(), 1u);
  EXPECT_EQ(m.nodes[0].name, "/flow/flows.0/enc/Tanh");
}

TEST(VerifyReduce, AgreeingModelWritesNothingAndExitsZero) {
  fs::path bundle = scratch_dir() / "nothing";
  CliResult r = lockstep({"reduce", model_file("g174"), "--seed-inputs", "vits", "-o", bundle.string()});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_FALSE(fs::exists(bundle / "model.onnx"));
  EXPECT_NE(r.line("verdict: ").find("agree"), std::string::npos) << r.out;
}

TEST(VerifyReduce, HelpExplainsTheBundleAndExitStatus) {
  CliResult r = lockstep({"reduce", "--help"});
  EXPECT_EQ(r.status, 0);
  for (const char* want : {"ddmin", "test_data_set_0", "README.md", "cosine", "Exit status: 0"})
    EXPECT_NE(r.out.find(want), std::string::npos) << want;
}

}  // namespace
}  // namespace lockstep
