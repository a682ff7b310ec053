// Every standard op case on every target this build can run, against ref.
#include <gtest/gtest.h>

#include <iostream>

#include "backend/cuda/cuda_device.h"
#include "verify/harness.h"

namespace lockstep {
namespace {

TEST(Harness, EveryOpCaseAgreesWithRefOnCpu) {
  int passed = 0;
  for (const OpCase& c : standard_cases()) {
    CaseOutcome r = run_case(c, "cpu");
    EXPECT_EQ(r.status, CaseOutcome::Passed) << c.name << ": " << r.detail;
    passed += r.status == CaseOutcome::Passed;
  }
  std::cout << "harness on cpu: " << passed << " of " << standard_cases().size() << " cases agree with ref\n";
}

TEST(Harness, EveryOpCaseAgreesWithRefOnCuda) {
  std::string why = cuda::unavailable_reason();
  if (!why.empty()) GTEST_SKIP() << "harness not run on cuda: " << why;
  int passed = 0;
  for (const OpCase& c : standard_cases()) {
    CaseOutcome r = run_case(c, "cuda");
    EXPECT_EQ(r.status, CaseOutcome::Passed) << c.name << ": " << r.detail;
    passed += r.status == CaseOutcome::Passed;
  }
  std::cout << "harness on cuda: " << passed << " of " << standard_cases().size() << " cases agree with ref\n";
}

}  // namespace
}  // namespace lockstep
