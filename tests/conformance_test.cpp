// ONNX's own backend conformance cases for every supported op, run on `ref`.
#include <gtest/gtest.h>

#include <iostream>
#include <set>

#include "test_util.h"
#include "verify/conformance.h"

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>

#include "core/dirs.h"

namespace lockstep {
namespace {

// Cases whose ops are all supported but which use a feature lockstep rejects on purpose.
// Each must be reported unsupported (not failed), with a reason naming the feature.
const std::set<std::string> kExpectedUnsupported = {
    "test_equal_string", "test_equal_string_broadcast",  // string tensors
    "test_identity_opt",                                 // optional type
    "test_identity_sequence",                            // sequence type
};

void expect_all_supported_pass(const std::string& target, size_t sample = 1) {
  std::vector<CaseResult> results = testing::conformance_on(target, sample);
  ASSERT_GE(results.size(), 300u / sample);
  for (const CaseResult& r : results) {
    if (kExpectedUnsupported.count(r.name) || (target != "ref" && testing::run_time_shaped_cases().count(r.name))) {
      EXPECT_EQ(r.status, CaseResult::Unsupported) << target << " " << r.name << ": " << r.detail;
      continue;
    }
    EXPECT_EQ(r.status, CaseResult::Passed) << target << " " << r.name << ": " << r.detail;
  }
}

TEST(ConformanceRef, EverySupportedCasePasses) { expect_all_supported_pass("ref"); }

// The compiled targets run the same cases through the shared pipeline (group normalisation and
// MVN "expanded" cases caught a reduction-var renumbering bug in epilogue fusion).
LOCKSTEP_ON_EACH_TARGET(Conformance);

TEST_P(Conformance, EverySupportedCasePasses) {
  expect_all_supported_pass(GetParam(), testing::conformance_sample(GetParam()));
}

// A sample leaves cases out, never an op: it runs each case that brings a new one.
TEST(ConformanceRef, ASampleCoversEveryOpOfTheFullSet) {
  auto ops_of = [](const std::vector<CaseResult>& rs) {
    std::set<std::string> ops;
    for (const CaseResult& r : rs) ops.insert(r.ops.begin(), r.ops.end());
    return ops;
  };
  auto full = run_conformance(LOCKSTEP_TEST_DATA "/onnx-node", "ref");
  auto third = run_conformance(LOCKSTEP_TEST_DATA "/onnx-node", "ref", "", 3);
  EXPECT_LT(third.size(), full.size() / 2);
  EXPECT_GT(third.size(), full.size() / 3);
  EXPECT_EQ(ops_of(third), ops_of(full));
  std::set<std::string> names, sliced;
  for (const CaseResult& r : full) names.insert(r.name);
  for (const CaseResult& r : third) EXPECT_TRUE(names.count(r.name)) << r.name;
  // The three slices (CI runs the day's) run every case between them, each its own third.
  for (size_t slice = 0; slice < 3; ++slice) {
    auto part = run_conformance(LOCKSTEP_TEST_DATA "/onnx-node", "ref", "", 3, slice);
    EXPECT_EQ(ops_of(part), ops_of(full)) << "slice " << slice;
    EXPECT_LT(part.size(), full.size() / 2) << "slice " << slice;
    for (const CaseResult& r : part) sliced.insert(r.name);
  }
  EXPECT_EQ(sliced, names);
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// A valid model of another domain (ai.onnx.ml, training) is not lockstep's to run: the suite
// counts it unsupported, saying which domain, not failed.
TEST(ConformanceRef, AModelOfAnotherDomainIsUnsupportedNotFailed) {
  PrivateTempDir dir("lockstep-test");
  std::filesystem::path c = dir.path() / "test_ml_only";
  std::filesystem::create_directories(c / "test_data_set_0");
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* o = m.add_opset_import();
  o->set_domain("ai.onnx.ml");
  o->set_version(3);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("ml");
  onnx::NodeProto* n = g->add_node();
  n->set_op_type("Binarizer");
  n->set_domain("ai.onnx.ml");
  n->add_input("x");
  n->add_output("y");
  for (const char* name : {"x", "y"}) {
    onnx::ValueInfoProto* v = std::string(name) == "x" ? g->add_input() : g->add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  std::ofstream(c / "model.onnx", std::ios::binary) << m.SerializeAsString();
  std::vector<CaseResult> r = run_conformance(dir.path().string(), "ref");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].status, CaseResult::Unsupported) << r[0].detail;
  EXPECT_NE(r[0].detail.find("ai.onnx.ml"), std::string::npos) << r[0].detail;
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

namespace fs = std::filesystem;

void copy_case(const fs::path& to, const std::string& model_of, const std::string& data_of) {
  const fs::path from = LOCKSTEP_TEST_DATA "/onnx-node";
  fs::create_directories(to);
  fs::copy_file(from / model_of / "model.onnx", to / "model.onnx");
  fs::copy(from / data_of / "test_data_set_0", to / "test_data_set_0");
}

// A compiled target builds cases in batches, yet each result is the case's own: a case that
// fails in the batch (Abs's model against Neg's data) reports its own mismatch, one the target
// refuses (Max in float64, which Metal lacks) the error a run of it alone gives, and the rest
// pass. All four are opset 13, so they share one batch.
TEST(ConformanceBatch, EachCaseReportsWhatItGivesAlone) {
  SKIP_UNLESS_RUNS("metal-sim");
  PrivateTempDir dir("lockstep-test");
  copy_case(dir.path() / "test_a_abs", "test_abs", "test_abs");
  copy_case(dir.path() / "test_b_wrong", "test_abs", "test_neg");
  copy_case(dir.path() / "test_c_f64", "test_max_float64", "test_max_float64");
  copy_case(dir.path() / "test_d_neg", "test_neg", "test_neg");
  std::vector<CaseResult> r = run_conformance(dir.path().string(), "metal-sim");
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].status, CaseResult::Passed) << r[0].detail;
  EXPECT_EQ(r[1].status, CaseResult::Failed);
  EXPECT_EQ(r[1].detail.rfind("test_data_set_0 output 0: ", 0), 0u) << r[1].detail;
  EXPECT_EQ(r[2].status, CaseResult::Unsupported) << r[2].detail;
  std::vector<CaseResult> alone = run_conformance(dir.path().string(), "metal-sim", "test_c_f64");
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_EQ(r[2].detail, alone[0].detail);
  EXPECT_NE(r[2].detail.find("f64, which target 'metal-sim' does not have"), std::string::npos) << r[2].detail;
  EXPECT_EQ(r[2].detail.find("c2/"), std::string::npos) << r[2].detail;
  EXPECT_EQ(r[3].status, CaseResult::Passed) << r[3].detail;
}

}  // namespace
}  // namespace lockstep
