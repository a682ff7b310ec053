// Small helpers shared by the test files.
#pragma once
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "backend/registry.h"
#include "core/error.h"
#include "passes/pipeline.h"
#include "runtime/target.h"
#include "verify/conformance.h"

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

// A float32 tensor of shape [1, n] holding `v`, and the floats of a float32 tensor.
inline Tensor row(const std::vector<float>& v) {
  Tensor t(DType::f32, {1, static_cast<int64_t>(v.size())});
  for (size_t k = 0; k < v.size(); ++k) t.data<float>()[k] = v[k];
  return t;
}
inline std::vector<float> values(const Tensor& t) { return {t.data<float>(), t.data<float>() + t.numel()}; }

// Why `target` cannot execute in this process ("" when it can): CI has no GPU. Asked once
// per target: finding out may start a driver.
inline std::string cannot_run(const std::string& target) {
  static std::map<std::string, std::string> known;
  auto it = known.find(target);
  if (it != known.end()) return it->second;
  const TargetInfo* t = find_target(target);
  return known[target] = t ? unavailable_reason(*t) : "target '" + target + "' is not registered";
}

// The suite's two tiers (docs/testing.md). The default one (the README's test command) runs
// one representative of every check on every target; the exhaustive forms (every fault on the
// decoder on every target, the metal-sim scenarios, every conformance case, long sweeps) run
// with LOCKSTEP_SWEEP=full: `ctest -L full`, tools/gpu-check.sh, and in CI a rotating slice.
inline bool full_sweep() {
  const char* sweep = std::getenv("LOCKSTEP_SWEEP");
  return sweep && std::string(sweep) == "full";
}

// Every Nth conformance case (and each bringing an op no earlier one had) on a compiled
// target: all of them on cpu (about a minute with an empty cache, the cases compiled in
// batches), a third on the others (PoCL builds every case in about 4 minutes).
inline size_t conformance_sample(const std::string& target) { return full_sweep() || target == "cpu" ? 1 : 3; }

// Which of the sample's N slices runs: the day's (days since 1970, mod N), so across N days of
// CI every case runs; LOCKSTEP_SAMPLE_SLICE=k picks one to reproduce a run.
inline size_t sample_slice(size_t sample) {
  if (const char* s = std::getenv("LOCKSTEP_SAMPLE_SLICE"); s && *s) return std::strtoul(s, nullptr, 10) % sample;
  return static_cast<size_t>(std::time(nullptr) / 86400) % sample;
}

// ONNX's conformance cases on `target` (every `sample`th, today's slice, as run_conformance
// takes it), with their scoreboard printed.
inline std::vector<CaseResult> conformance_on(const std::string& target, size_t sample) {
  size_t slice = sample_slice(sample);
  std::vector<CaseResult> results = run_conformance(LOCKSTEP_TEST_DATA "/onnx-node", target, "", sample, slice);
  std::cout << "conformance on " << target;
  if (sample > 1)
    std::cout << " (slice " << slice << " of " << sample << ": LOCKSTEP_SAMPLE_SLICE=" << slice
              << " repeats it, LOCKSTEP_SWEEP=full runs all)";
  std::cout << ":\n";
  print_scoreboard(std::cout, results);
  return results;
}

// Conformance cases whose output length is a value read at run time (Range of graph inputs,
// OneHot of a depth input):
// `ref` runs them; a compiled target refuses them as unsupported, naming the output.
inline const std::set<std::string>& run_time_shaped_cases() {
  static const std::set<std::string> cases = {"test_onehot_negative_indices",
                                              "test_onehot_with_axis",
                                              "test_onehot_with_negative_axis",
                                              "test_onehot_without_axis",
                                              "test_range_bfloat16_type_positive_delta",
                                              "test_range_float16_type_positive_delta",
                                              "test_range_float_type_positive_delta"};
  return cases;
}

// Every registered target that compiles (all but the reference), from the registry: the
// parameters of the per-target suites.
inline std::vector<std::string> compiled_targets() {
  std::vector<std::string> names;
  for (const TargetInfo* t : targets())
    if (!t->make_program) names.push_back(t->name);
  return names;
}

// Why `target` skips test suite `suite` ("" when it runs it), as the target lists it.
inline std::string skipped_suite(const std::string& target, const std::string& suite) {
  const TargetInfo* t = find_target(target);
  for (const auto& [name, why] : t ? t->skips : decltype(t->skips){})
    if (name == suite) return why;
  return "";
}

}  // namespace lockstep::testing

// Skips the test, with the reason shown, when the target cannot execute here.
#define SKIP_UNLESS_RUNS(target)                                                                      \
  do {                                                                                                \
    std::string why_not = ::lockstep::testing::cannot_run(target);                                    \
    if (!why_not.empty()) GTEST_SKIP() << "not run on " << (target) << " here: " << why_not;         \
  } while (0)

// Skips the test, saying how to run it, outside the exhaustive tier.
#define SKIP_UNLESS_FULL(what)                                                                     \
  do {                                                                                             \
    if (!::lockstep::testing::full_sweep())                                                        \
      GTEST_SKIP() << (what) << ": the exhaustive tier's (ctest -L full, or LOCKSTEP_SWEEP=full)"; \
  } while (0)

namespace lockstep::testing {

// A parameterised test run on each registered target, skipped with the reason where one
// cannot run or lists the suite among those it skips.
class OnEachTarget : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    SKIP_UNLESS_RUNS(GetParam());
    std::string suite = ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name();
    std::string why = skipped_suite(GetParam(), suite.substr(suite.find('/') + 1));
    if (!why.empty()) GTEST_SKIP() << GetParam() << " skips " << suite << ": " << why;
  }
};

// A test name for a target name ("a-b" -> "a_b"): gtest allows only letters, digits and _.
inline std::string param_name(const std::string& target) {
  std::string s = target;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

}  // namespace lockstep::testing

// Declares test suite `Suite` for TEST_P, instantiated as Targets/Suite.NAME/<target> for
// every compiled target in the registry (a test may register its own).
#define LOCKSTEP_ON_EACH_TARGET(Suite)                                                             \
  class Suite : public ::lockstep::testing::OnEachTarget {};                                       \
  INSTANTIATE_TEST_SUITE_P(Targets, Suite, ::testing::ValuesIn(::lockstep::testing::compiled_targets()), \
                           [](const auto& i) { return ::lockstep::testing::param_name(i.param); })
