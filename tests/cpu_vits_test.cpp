// The CPU target on the 174-node VITS cut at every prefix of the pass pipeline. Agreement and
// identical bytes on the VITS family, for every target, are target_vits_test.cpp's.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <set>

#include "backend/registry.h"
#include "test_util.h"
#include "verify/parity.h"
#include "vits.h"

namespace lockstep {
namespace {

const std::string kCut174 = "/flow/flows.0/enc/in_layers.1/Conv";

vits::Config flow_config() { return vits::Config{}; }

Graph cut(const std::string& at) { return vits::build_cut(flow_config(), {at}); }

std::vector<Tensor> run_cpu(const Graph& g, const TensorMap& in, CompileOptions o = {}) {
  return compile(g, "cpu", o)->run(in);
}

void expect_agrees(const Graph& g, const TensorMap& in, const std::vector<Tensor>& outs, const std::string& what) {
  std::vector<Agreement> a = agreement_with_ref(g, in, outs);
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_TRUE(agrees(a[k])) << what << " output " << k << ": " << describe(a[k]);
    std::printf("%s output %zu: %s\n", what.c_str(), k, describe(a[k]).c_str());
  }
}

TensorMap seed_inputs(const Graph& g, int64_t frames) { return vits::seed_inputs(g, frames); }

// Every prefix of the pass pipeline is a correct program. The default tier walks a sample
// (the exhaustive tier, LOCKSTEP_SWEEP=full, every N).
TEST(CpuVits, EveryPassLimitAgreesOn174) {
  Graph g = cut(kCut174);
  TensorMap in = seed_inputs(g, 1024);
  auto full = compile(g, "cpu");
  std::string want = tensor_sha256(full->run(in)[0]);
  int total = static_cast<int>(full->pass_log().size());
  ASSERT_GT(total, 50);
  std::set<int> limits;
  bool all = testing::full_sweep();
  for (int n = 0; n <= total; ++n)
    if (all || n <= 2 || n >= total - 2 || n % (total / 8) == 0) limits.insert(n);
  for (int n : limits) {
    CompileOptions o;
    o.pass_limit = n;
    o.verify_each = true;
    std::vector<Tensor> outs = run_cpu(g, in, o);
    expect_agrees(g, in, outs, "pass-limit " + std::to_string(n));
    // Fusion regroups the same float32 operations, so every prefix gives the same bytes.
    EXPECT_EQ(tensor_sha256(outs[0]), want) << "pass-limit " << n;
  }
  std::printf("walked %zu of %d pass limits\n", limits.size(), total + 1);
}

}  // namespace
}  // namespace lockstep
