// Small helpers shared by the test files.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <string>

#include "backend/cuda/cuda_device.h"
#include "core/error.h"
#include "passes/pipeline.h"

namespace lockstep::testing {

// The message of the lockstep::Error that f throws, or "" when it does not throw.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The lockstep binary the CLI tests run: $LOCKSTEP_BINARY when set (a prebuilt tree on another
// machine, as tools/gpu-check.sh runs), else the one this build made.
inline std::string lockstep_binary() {
  const char* b = std::getenv("LOCKSTEP_BINARY");
  return b && *b ? b : LOCKSTEP_BINARY;
}

// The plan the shared pipeline makes for `g` specialised to `in` (what every printer prints).
inline kir::Plan plan_for(const Graph& g, const TensorMap& in) {
  return run_pipeline(g, specialisation_for(g, in), PipelineOptions{}).plan;
}

// Why `target` cannot execute in this process ("" when it can): CI has no GPU.
inline std::string cannot_run(const std::string& target) {
  return target == "cuda" ? cuda::unavailable_reason() : "";
}

}  // namespace lockstep::testing

// Skips the test, with the reason shown, when the target cannot execute here.
#define SKIP_UNLESS_RUNS(target)                                                                      \
  do {                                                                                                \
    std::string why_not = ::lockstep::testing::cannot_run(target);                                    \
    if (!why_not.empty()) GTEST_SKIP() << "not run on " << (target) << " here: " << why_not;         \
  } while (0)

namespace lockstep::testing {

// A parameterised test run on each target, skipped with the reason where one cannot run.
class OnEachTarget : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { SKIP_UNLESS_RUNS(GetParam()); }
};

}  // namespace lockstep::testing

// Declares test suite `Suite` for TEST_P, instantiated as Targets/Suite.NAME/cpu and .../cuda.
#define LOCKSTEP_ON_EACH_TARGET(Suite)                                                   \
  class Suite : public ::lockstep::testing::OnEachTarget {};                             \
  INSTANTIATE_TEST_SUITE_P(Targets, Suite, ::testing::Values("cpu", "cuda"),             \
                           [](const auto& i) { return std::string(i.param); })
