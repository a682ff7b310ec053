// Every standard op case on every target this build can run, against ref.
#include <gtest/gtest.h>

#include <iostream>

#include "harness.h"
#include "test_util.h"

namespace lockstep {
namespace {

// Every compiled target in the registry, skipped with the reason where one cannot run.
LOCKSTEP_ON_EACH_TARGET(Harness);

TEST_P(Harness, EveryOpCaseAgreesWithRef) {
  int passed = 0;
  for (const OpCase& c : standard_cases()) {
    CaseOutcome r = run_case(c, GetParam());
    EXPECT_EQ(r.status, CaseOutcome::Passed) << c.name << ": " << r.detail;
    passed += r.status == CaseOutcome::Passed;
  }
  std::cout << "harness on " << GetParam() << ": " << passed << " of " << standard_cases().size()
            << " cases agree with ref\n";
}

}  // namespace
}  // namespace lockstep
