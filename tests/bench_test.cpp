// `lockstep bench`: the figures it reports are about the program that computes the right
// bytes, and every timed run is accounted for.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "backend/registry.h"
#include "runtime/program.h"
#include "verify/parity.h"
#include "verify_cli.h"

namespace lockstep {
namespace {

using namespace verify_test;

TEST(Bench, ReportsEveryRunAndTheBytesOfAnInProcessRun) {
  fs::path json = scratch_dir() / "bench.json";
  CliResult r = lockstep({"bench", model_file("g15"), "--target", "cpu", "--seed-inputs", "vits", "--runs", "4",
                          "--warmup", "1", "--per-kernel", "--top", "3", "--json", json.string()});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  nlohmann::json j = nlohmann::json::parse(slurp(json));
  ASSERT_EQ(j["run_ms"].size(), 4u);
  for (const auto& ms : j["run_ms"]) EXPECT_GT(ms.get<double>(), 0);
  EXPECT_LE(j["min_ms"].get<double>(), j["median_ms"].get<double>());
  EXPECT_LE(j["median_ms"].get<double>(), j["max_ms"].get<double>());
  EXPECT_TRUE(j["bit_identical"].get<bool>());
  EXPECT_NE(r.out.find("bit-identical in all 6 runs"), std::string::npos) << r.out;
  // The bytes timed are the bytes this build computes for the same model and inputs.
  Graph g = graph15();
  std::vector<Tensor> outs = compile(g, "cpu")->run(vits::seed_inputs(g, 1024));
  std::string want;
  for (const Tensor& t : outs) want += (want.empty() ? "" : ",") + tensor_sha256(t);
  EXPECT_EQ(j["outputs_sha256"], want);
  // One entry per kernel of the program, each with its ONNX nodes; three listed.
  auto p = compile(g, "cpu");
  p->prepare(vits::seed_inputs(g, 1024));
  std::vector<Program::KernelTime> launched = p->profile(vits::seed_inputs(g, 1024));
  ASSERT_EQ(j["kernels"].size(), launched.size());
  std::vector<bool> seen(launched.size());
  for (const auto& k : j["kernels"]) {
    EXPECT_FALSE(k["nodes"].empty());
    // `launch` is the kernel's place in the launch order (what a profiler's IDs count).
    size_t at = k["launch"].get<size_t>();
    ASSERT_LT(at, launched.size());
    EXPECT_EQ(k["kernel"], launched[at].kernel);
    EXPECT_FALSE(seen[at]);
    seen[at] = true;
  }
  EXPECT_NE(r.out.find("kernels (one profiled run): " + std::to_string(j["kernels"].size()) + " kernels"), std::string::npos);
}

TEST(Bench, BadCountsAndModelsAreExitTwo) {
  CliResult r = lockstep({"bench", model_file("g15"), "--runs", "0", "--seed-inputs", "vits"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--runs: '0' is not an integer from 1"), std::string::npos) << r.err;
  r = lockstep({"bench", (scratch_dir() / "missing.onnx").string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("missing.onnx"), std::string::npos) << r.err;
  r = lockstep({"bench", "--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("Exit status"), std::string::npos);
}

}  // namespace
}  // namespace lockstep
